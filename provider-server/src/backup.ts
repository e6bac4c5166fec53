// Backup and restore of a provider's state (README.md, Backup and restore):
// the data directory (model keys and packages, the package log and its key,
// blocklist keys, the LMTP journal) and the store. `backup` runs while the
// server and the LMTP stage run: each SQLite file (store.db,
// lmtp-journal.db) is copied through SQLite's online backup API, in one step,
// so the copy is one consistent state however much the server writes
// meanwhile (WAL readers do not block writers); a PostgreSQL store is dumped
// with pg_dump (one consistent snapshot). `restore` puts a backup in place of
// a data directory that does not exist yet, with every instance stopped: the
// SQLite files are checked before they are used, and a PostgreSQL dump goes
// into an empty database only. Key files keep their 0600 mode; the backup
// directory is created 0700, since it holds every secret key of the
// provider: keep it like one.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { redactedUrl } from './store-postgres.js';

/** The SQLite files of a data directory, copied through the backup API (their -wal and -shm files are not copied). */
const SQLITE_FILES = ['store.db', 'lmtp-journal.db'];
const POSTGRES_DUMP = 'store.pgdump';

const isSqliteSidecar = (name: string): boolean =>
  SQLITE_FILES.some((f) => name === `${f}-wal` || name === `${f}-shm` || name === `${f}-journal`);

/** Every regular file under `dir`, relative to it, but the SQLite files (and theirs). */
function plainFiles(dir: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .filter((f) => !SQLITE_FILES.includes(f) && !isSqliteSidecar(f));
}

/** Copies `files` from `from` to `to`, keeping each file's mode (keys stay 0600), directories 0700. */
function copyFiles(from: string, to: string, files: string[]): void {
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(to, f)), { recursive: true, mode: 0o700 });
    fs.copyFileSync(path.join(from, f), path.join(to, f), fs.constants.COPYFILE_EXCL);
    fs.chmodSync(path.join(to, f), fs.statSync(path.join(from, f)).mode & 0o777);
  }
}

/** A libpq connection to `url` for a client program: the password in its environment, never on its command line. */
function libpq(url: string): { args: string[]; env: NodeJS.ProcessEnv } {
  const u = new URL(url);
  const password = decodeURIComponent(u.password);
  u.password = '';
  return { args: ['--dbname', u.toString()], env: { ...process.env, ...(password && { PGPASSWORD: password }) } };
}

function run(program: string, args: string[], env: NodeJS.ProcessEnv, what: string): void {
  const r = spawnSync(program, args, { env, encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
  if (r.error) throw new Error(`${what}: ${program} not found (apt-get install postgresql-client)`);
  if (r.status !== 0) throw new Error(`${what} failed: ${r.stderr.trim()}`);
}

export interface BackupResult {
  files: number;
  /** The SQLite files copied, or the PostgreSQL dump. */
  stores: string[];
}

/**
 * Writes a backup of `dataDir` (and of the PostgreSQL store at `store`, if
 * given) into `dest`, a directory that must not exist yet.
 */
export async function backup(opts: { dataDir: string; store?: string; dest: string }): Promise<BackupResult> {
  const { dataDir, dest } = opts;
  if (!fs.existsSync(dataDir)) throw new Error(`backup: no data directory ${dataDir}`);
  fs.mkdirSync(path.dirname(path.resolve(dest)), { recursive: true });
  fs.mkdirSync(dest, { mode: 0o700 }); // fails if it exists: a backup is never written over another
  const files = plainFiles(dataDir);
  copyFiles(dataDir, dest, files);
  const stores: string[] = [];
  for (const name of SQLITE_FILES) {
    const file = path.join(dataDir, name);
    if (!fs.existsSync(file)) continue;
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      // All pages in one step: a step is one read transaction, a consistent state.
      await db.backup(path.join(dest, name), { progress: () => 0x7fffffff });
    } finally {
      db.close();
    }
    fs.chmodSync(path.join(dest, name), 0o600);
    stores.push(name);
  }
  if (opts.store) {
    const { args, env } = libpq(opts.store);
    const dump = path.join(dest, POSTGRES_DUMP);
    run(
      'pg_dump',
      ['--format=custom', '--no-owner', '--file', dump, ...args],
      env,
      `pg_dump of ${redactedUrl(opts.store)}`,
    );
    fs.chmodSync(dump, 0o600);
    stores.push(POSTGRES_DUMP);
  }
  return { files: files.length, stores };
}

/**
 * Restores the backup in `src` as `dataDir`, which must not exist (move the
 * damaged one aside: nothing is overwritten), and its PostgreSQL dump into
 * the database at `store`, which must hold no provider schema yet.
 */
export async function restore(opts: { src: string; dataDir: string; store?: string }): Promise<BackupResult> {
  const { src, dataDir } = opts;
  if (fs.existsSync(dataDir))
    throw new Error(`restore: ${dataDir} exists; stop every instance and move it aside first (nothing is overwritten)`);
  const dumped = fs.existsSync(path.join(src, POSTGRES_DUMP));
  if (dumped !== Boolean(opts.store))
    throw new Error(
      dumped
        ? `restore: ${src} holds a PostgreSQL dump; name the (empty) database to restore it into with --store`
        : `restore: ${src} holds no PostgreSQL dump (${POSTGRES_DUMP}); leave out --store to restore the SQLite store`,
    );
  const stores = SQLITE_FILES.filter((f) => fs.existsSync(path.join(src, f)));
  for (const name of stores) {
    const db = new Database(path.join(src, name), { readonly: true, fileMustExist: true });
    try {
      const check = db.pragma('integrity_check', { simple: true });
      if (check !== 'ok') throw new Error(`restore: ${name} in ${src} is damaged (${String(check)})`);
    } finally {
      db.close();
    }
  }
  if (opts.store) await emptyDatabase(opts.store);
  // Into a directory beside it, renamed into place at the end: a failed restore leaves no data directory.
  const staging = `${path.resolve(dataDir)}.restoring`;
  fs.rmSync(staging, { recursive: true, force: true });
  fs.mkdirSync(staging, { recursive: true, mode: 0o700 });
  try {
    const files = plainFiles(src).filter((f) => f !== POSTGRES_DUMP);
    copyFiles(src, staging, [...files, ...stores]);
    if (opts.store) {
      const { args, env } = libpq(opts.store);
      const restoreArgs = ['--no-owner', '--exit-on-error', '--single-transaction', ...args];
      run(
        'pg_restore',
        [...restoreArgs, path.join(src, POSTGRES_DUMP)],
        env,
        `pg_restore into ${redactedUrl(opts.store)}`,
      );
      stores.push(POSTGRES_DUMP);
    }
    fs.renameSync(staging, dataDir);
    return { files: files.length, stores };
  } catch (e) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw e;
  }
}

/** Refuses a database that already holds a provider store: a restore never mixes two. */
async function emptyDatabase(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  try {
    await client.connect();
    const { rows } = await client.query("SELECT to_regclass('pmf_schema') IS NOT NULL AS taken");
    if ((rows[0] as { taken: boolean }).taken)
      throw new Error(`restore: ${redactedUrl(url)} already holds a provider store; restore into an empty database`);
  } finally {
    await client.end().catch(() => undefined);
  }
}
