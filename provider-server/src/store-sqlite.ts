// The embedded store: one SQLite file through better-sqlite3 (WAL, so the
// admin CLI can open it beside a running server). Schema changes are the
// numbered steps of store-schema.ts, tracked in PRAGMA user_version; old
// stores are migrated on open.
import fs from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { LoopLoad } from './loop-load.js';
import { keyEpochsTable, sqliteSteps, WORDS } from './store-schema.js';
import type { Steps } from './store-driver.js';
import { newKeySalt, Store, type Durability, type SqlDriver } from './store.js';
import { SyncRounds } from './sync-rounds.js';

/** A schema change: SQL, or a function for one that needs values from this process (a salt per user). */
type Migration = string | ((db: Database.Database) => void);

/**
 * Step 8 (store-schema.ts) in SQLite: the users table rebuilt with a key
 * salt per account and AUTOINCREMENT (ids never handed out again), key epochs
 * moved from user ids to salts.
 */
const keySalts: Migration = (db) => {
  // No new account may take an id any row still names, even of a user deleted before.
  const { named } = db
    .prepare(
      `SELECT MAX(id) AS named FROM (SELECT MAX(id) AS id FROM users
           UNION ALL SELECT MAX(user_id) FROM tokens UNION ALL SELECT MAX(user_id) FROM messages
           UNION ALL SELECT MAX(user_id) FROM user_keys UNION ALL SELECT MAX(user_id) FROM rate_windows
           UNION ALL SELECT MAX(user_id) FROM hello_windows UNION ALL SELECT MAX(user_id) FROM topic_settings)`,
    )
    .get() as { named: number | null };
  // First what ON DELETE CASCADE would have removed after users deleted with foreign keys off
  // (the sqlite3 shell's default): their ids were free to come back with everything of theirs.
  db.exec(`DELETE FROM tokens WHERE user_id NOT IN (SELECT id FROM users);
     DELETE FROM topic_settings WHERE user_id NOT IN (SELECT id FROM users);
     DELETE FROM messages WHERE user_id NOT IN (SELECT id FROM users);
     DELETE FROM classified WHERE NOT EXISTS
       (SELECT 1 FROM messages m WHERE m.user_id = classified.user_id AND m.message_id = classified.message_id);
     DELETE FROM topics WHERE NOT EXISTS
       (SELECT 1 FROM messages m WHERE m.user_id = topics.user_id AND m.message_id = topics.message_id);`);
  db.exec(`CREATE TABLE users_v8 (
       id INTEGER PRIMARY KEY AUTOINCREMENT,
       name TEXT NOT NULL UNIQUE,
       created_at INTEGER NOT NULL,
       key_salt BLOB NOT NULL UNIQUE CHECK (length(key_salt) = 32)
     );
     ${keyEpochsTable(WORDS.sqlite)}`);
  const copy = db.prepare('INSERT INTO users_v8 (id, name, created_at, key_salt) VALUES (?, ?, ?, ?)');
  for (const u of db.prepare('SELECT id, name, created_at FROM users').all() as {
    id: number;
    name: string;
    created_at: number;
  }[])
    copy.run(u.id, u.name, u.created_at, newKeySalt());
  // The keys of existing accounts came from (id, epoch); under the salt each starts at its next
  // epoch, so a client holding the old epoch's key-switching key is sent the new one.
  db.exec(`INSERT INTO key_epochs (key_salt, model_id, model_version, epoch, used)
       SELECT u.key_salt, k.model_id, k.model_version, k.epoch + 1, 0 FROM user_keys k JOIN users_v8 u ON u.id = k.user_id;
     DROP TABLE user_keys;
     DROP TABLE users;
     ALTER TABLE users_v8 RENAME TO users;`);
  db.prepare("DELETE FROM sqlite_sequence WHERE name = 'users'").run();
  db.prepare("INSERT INTO sqlite_sequence (name, seq) VALUES ('users', ?)").run(named ?? 0);
};

const MIGRATIONS: Migration[] = sqliteSteps().map((step) => (step === 'key-salts' ? keySalts : step));

export const SQLITE_SCHEMA_VERSION = MIGRATIONS.length;

/** Why the server cannot write in `dir`, if that is so: a read-only file system, or permissions. */
function unwritable(dir: string): string | undefined {
  try {
    fs.accessSync(dir, fs.constants.W_OK);
    return undefined;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'EROFS') return `${dir} is on a read-only file system (check how it is mounted)`;
    if (code === 'EACCES' || code === 'EPERM') return `the server may not write in ${dir} (check its owner and mode)`;
    if (code === 'ENOENT') return `${dir} does not exist`;
    return `${dir} cannot be written (${code})`;
  }
}

/**
 * What to tell an operator when the store cannot be opened, by SQLite's
 * error code: only damage calls for a backup; a read-only or full disk, a
 * directory the server may not write, another process's lock do not.
 */
function openFailure(file: string, e: unknown): Error {
  const code = String((e as { code?: unknown }).code ?? '');
  const why = (e as Error).message;
  if (code.startsWith('SQLITE_READONLY') || code === 'SQLITE_CANTOPEN') {
    const dir = unwritable(path.dirname(file));
    const what = code === 'SQLITE_CANTOPEN' ? 'cannot be opened' : 'cannot be written';
    return new Error(
      dir
        ? `store ${file} ${what} (${why}): ${dir}; the store and the WAL beside it need a writable directory`
        : `store ${file} ${what} (${why}): make the file and its directory writable for the server`,
    );
  }
  if (code === 'SQLITE_FULL') return new Error(`store ${file}: the disk is full (${why}); free space on it`);
  if (code.startsWith('SQLITE_IOERR'))
    return new Error(`store ${file}: the disk failed to read or write (${why}); check the disk and the kernel log`);
  if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'))
    return new Error(`store ${file} is locked by another process (${why}); stop it or wait`);
  return new Error(`store ${file} is damaged (${why}); restore it from a backup`);
}

/** Opens the database and checks every page: a damaged store stops the server at start, not at each request. */
function openChecked(file: string): Database.Database {
  let db: Database.Database | undefined;
  try {
    db = new Database(file);
    db.pragma('journal_mode = WAL');
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw Object.assign(new Error(String(check)), { code: 'SQLITE_CORRUPT' });
    return db;
  } catch (e) {
    db?.close();
    throw openFailure(file, e);
  }
}

/** Brings the schema to version `to` (the latest by default; tests make older stores with less). @internal */
export function migrateSqlite(db: Database.Database, to = MIGRATIONS.length): void {
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(`store schema version ${current} is newer than this server (${MIGRATIONS.length})`);
  }
  // Off while migrating, as SQLite's table rebuilds need (a dropped parent table would cascade);
  // no migration may leave a row without its parent that was not so before (a raw delete with
  // foreign keys off leaves some).
  db.pragma('foreign_keys = OFF');
  const orphans = (): number => (db.pragma('foreign_key_check') as unknown[]).length;
  for (let v = current; v < to; v++) {
    db.transaction(() => {
      const before = orphans();
      const m = MIGRATIONS[v];
      if (typeof m === 'string') db.exec(m);
      else m(db);
      if (orphans() > before) throw new Error(`migration ${v + 1} left rows without their parent`);
      db.pragma(`user_version = ${v + 1}`);
    })();
  }
  db.pragma('foreign_keys = ON');
}

interface PendingWrite {
  /** Runs inside the batch's transaction: a statement, or an operation's steps (SqliteDriver.atomic). */
  apply(): unknown;
  durability: Durability;
  resolve(result: unknown): void;
  reject(e: unknown): void;
}

/** Under load, commits at most this often (SqliteDriver.scheduleFlush). */
const COMMIT_GAP_MS = 1;

/**
 * Group commit: writes issued in the same turn of the event loop (under
 * load: within the commit gap, scheduleFlush) run in one transaction. A
 * statement that fails alone (a constraint) is backed out alone, as SQLite
 * does inside a transaction, and the others commit; so is an operation of
 * several statements (atomic), under a savepoint of its own. A
 * durable write resolves once its COMMIT is on disk, a `committed` one right
 * after the COMMIT (store.ts, Durability).
 *
 * On disk means the WAL was fdatasync'ed after the commit, which is what
 * synchronous=FULL does inside COMMIT, except that here the sync runs on
 * libuv's thread pool: the event loop keeps serving sessions (and commits
 * the next batch) while the disk works, instead of stalling for every fsync
 * (a quarter of its time under load, and the provider's throughput was the
 * disk's fsync rate). One sync at a time; commits made while it runs share
 * the next one. The connection runs synchronous=NORMAL, under which SQLite
 * itself syncs the WAL before every checkpoint and the database file after
 * it, so a commit that a checkpoint moved out of the WAL is on disk as well.
 */
class SqliteDriver implements SqlDriver {
  readonly dialect = 'sqlite';
  private pending: PendingWrite[] = [];
  private lastCommit = -Infinity;
  /** WAL syncs, one at a time: commits made while one runs share the next. */
  private readonly syncs = new SyncRounds(() => this.syncWal());
  /**
   * The WAL, opened once: SQLite keeps the file (it truncates it in place,
   * and deletes it only when the last connection closes, never this one
   * while it is open), and opening and closing it around every sync cost
   * about a twentieth of the event loop's time under load.
   */
  private walFile: fs.promises.FileHandle | undefined;
  /** Set once a WAL sync failed: nothing that follows can be called durable. */
  private broken: Error | undefined;
  /** The store's statements are a fixed set of SQL strings: each is compiled once. */
  private readonly statements = new Map<string, Database.Statement>();

  /** `wal`: the WAL file to sync after a commit; none when COMMIT syncs itself (or nothing is on disk). */
  constructor(
    private readonly db: Database.Database,
    private readonly wal: string | undefined,
    private readonly loop: Pick<LoopLoad, 'busy'>,
    private readonly commitGapMs = COMMIT_GAP_MS,
  ) {}

  private prepare(sql: string): Database.Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) this.statements.set(sql, (stmt = this.db.prepare(sql)));
    return stmt;
  }

  async all<T>(sql: string, params: unknown[] = [], durability: Durability = 'durable'): Promise<T[]> {
    const stmt = this.prepare(sql);
    if (stmt.readonly) return stmt.all(...params) as T[];
    const result = await this.write(stmt, params, durability);
    return (stmt.reader ? result : []) as T[]; // rows only from RETURNING, as before
  }

  async run(sql: string, params: unknown[] = [], durability: Durability = 'durable'): Promise<number> {
    return (await this.write(this.prepare(sql), params, durability)) as number;
  }

  /**
   * The operation's statements one after the other, synchronously, inside
   * the batch's transaction: one commit round for all of them, where
   * awaiting each would wait for a commit round per statement.
   */
  atomic<T>(_name: string, steps: Steps<T>, durability: Durability = 'durable'): Promise<T> {
    return this.queue(() => this.inSavepoint(steps), durability) as Promise<T>;
  }

  /** Runs `steps` under a savepoint: when they fail, none of their statements apply. */
  private inSavepoint<T>(steps: Steps<T>): T {
    this.prepare('SAVEPOINT step').run();
    try {
      let next = steps.next();
      while (!next.done) {
        const { sql, params, rows } = next.value;
        let result: unknown;
        try {
          const stmt = this.prepare(sql);
          result = rows ? (stmt.reader ? stmt.all(...params) : (stmt.run(...params), [])) : stmt.run(...params).changes;
        } catch (e) {
          if (!this.db.inTransaction) throw e; // rolled back whole (disk full): nothing more may run
          next = steps.throw(e);
          continue;
        }
        next = steps.next(result);
      }
      this.prepare('RELEASE step').run();
      return next.value;
    } catch (e) {
      if (this.db.inTransaction) {
        this.prepare('ROLLBACK TO step').run();
        this.prepare('RELEASE step').run();
      }
      throw e;
    }
  }

  /**
   * Resolves once every commit made so far is on disk, this process's or
   * another's on the same file: a reader that is about to send what it read
   * (a recorded answer) waits for it here, since it may have read a commit
   * whose writer is still waiting for its sync.
   */
  durable(): Promise<void> {
    if (this.broken) return Promise.reject(this.broken);
    if (!this.wal) return Promise.resolve();
    // Only a sync that starts after now covers everything committed until now.
    return this.syncs.wait();
  }

  private write(stmt: Database.Statement, params: unknown[], durability: Durability): Promise<unknown> {
    return this.queue(() => (stmt.reader ? stmt.all(...params) : stmt.run(...params).changes), durability);
  }

  private queue(apply: () => unknown, durability: Durability): Promise<unknown> {
    if (this.broken) return Promise.reject(this.broken);
    return new Promise((resolve, reject) => {
      if (this.pending.push({ apply, durability, resolve, reject }) === 1) this.scheduleFlush();
    });
  }

  /**
   * Next turn; but while the event loop is busy, not sooner than
   * COMMIT_GAP_MS after the last commit. A commit costs the loop about as
   * much as the few statements in it (SQLite appends every page they touched
   * to the WAL), so under load fewer, larger transactions leave it more time
   * for sessions. A lightly used provider commits at once, as it has time to.
   */
  private scheduleFlush(): void {
    const wait = this.lastCommit + this.commitGapMs - performance.now();
    if (wait > 0 && this.loop.busy()) setTimeout(() => this.flush(), wait);
    else setImmediate(() => this.flush());
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    if (this.broken) {
      for (const op of batch) op.reject(this.broken);
      return;
    }
    const done: { op: PendingWrite; result?: unknown; error?: unknown }[] = [];
    try {
      this.db.exec('BEGIN IMMEDIATE');
      for (const op of batch) {
        try {
          done.push({ op, result: op.apply() });
        } catch (error) {
          // Outside a transaction now means SQLite rolled all of it back (disk full, I/O error).
          if (!this.db.inTransaction) throw error;
          done.push({ op, error });
        }
      }
      this.db.exec('COMMIT');
      this.lastCommit = performance.now();
    } catch (e) {
      if (this.db.inTransaction) this.db.exec('ROLLBACK');
      for (const op of batch) op.reject(e);
      return;
    }
    for (const { op, result, error } of done) {
      if (error !== undefined) op.reject(error);
      else if (op.durability === 'committed') op.resolve(result);
      else this.durable().then(() => op.resolve(result), op.reject);
    }
  }

  /** One WAL sync; after a failed one, every later one fails too. */
  private async syncWal(): Promise<void> {
    if (this.broken) throw this.broken;
    try {
      this.walFile ??= await fs.promises.open(this.wal!, 'r+');
      await this.walFile.datasync();
    } catch (e) {
      // As PostgreSQL after a failed fsync: the kernel may have dropped the
      // unwritten pages, so no later write may be called durable either.
      this.broken = new Error(`store: syncing ${this.wal} failed (${(e as Error).message}); restart the server`);
      throw this.broken;
    }
  }

  violated(e: unknown): 'unique' | 'foreign_key' | undefined {
    const code = (e as { code?: unknown }).code;
    if (code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE') return 'unique';
    if (code === 'SQLITE_CONSTRAINT_FOREIGNKEY') return 'foreign_key';
    return undefined;
  }

  async schemaVersion(): Promise<number> {
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  async close(): Promise<void> {
    this.flush();
    await this.syncs.idle();
    await this.walFile?.close();
    this.db.close();
  }
}

export interface SqliteStoreOptions {
  /** Whether the event loop is busy, to space commits (scheduleFlush); tests fix it. */
  loop?: Pick<LoopLoad, 'busy'>;
  /** The commit gap under load (COMMIT_GAP_MS); tests widen it so that a slow machine's turns still fall inside. */
  commitGapMs?: number;
}

/** Opens (creating and migrating) an SQLite store; `':memory:'` for tests. */
export function openSqliteStore(file: string, opts: SqliteStoreOptions = {}): Store {
  const loop = opts.loop ?? new LoopLoad();
  const db = openChecked(file);
  try {
    db.pragma('foreign_keys = ON');
    db.pragma('busy_timeout = 5000');
    // Every write is on disk before it resolves: an answer is recorded
    // (docs/protocol.md#exactly-once-verdicts) before it is sent, so no OS
    // crash can roll back a claim whose answer the client already has.
    db.pragma('synchronous = FULL');
    migrateSqlite(db);
    if (db.memory || db.pragma('journal_mode', { simple: true }) !== 'wal')
      return new Store(new SqliteDriver(db, undefined, loop, opts.commitGapMs));
    // The driver syncs the WAL itself, off the event loop (SqliteDriver).
    db.pragma('synchronous = NORMAL');
    return new Store(new SqliteDriver(db, `${path.resolve(file)}-wal`, loop, opts.commitGapMs));
  } catch (e) {
    db.close();
    throw e;
  }
}
