// A throwaway PostgreSQL 15 (Debian's binaries) for tests: initdb in a
// temporary folder, the server in the foreground as a child of the test
// (reachable only through a unix socket in that folder), a fresh database
// per `database()`, stopped by its PID. initdb refuses root, so both run as
// the `postgres` system user when the tests run as root.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';

const BIN = '/usr/lib/postgresql/15/bin';

export interface TestPostgres {
  /** A URL of a new, empty database. */
  database(): Promise<string>;
  /** The server's processes now: the postmaster and its children (backends, WAL writer, …). */
  pids(): number[];
  stop(): Promise<void>;
}

/** Why PostgreSQL tests cannot run here, or undefined when they can. */
export function postgresMissing(): string | undefined {
  if (!fs.existsSync(path.join(BIN, 'postgres')) || !fs.existsSync(path.join(BIN, 'initdb')))
    return `PostgreSQL 15 binaries not found in ${BIN} (apt-get install postgresql-15; scripts/setup.sh does it)`;
  if (process.getuid?.() === 0) {
    try {
      execFileSync('id', ['-u', 'postgres'], { stdio: 'ignore' });
    } catch {
      return 'running as root without a postgres system user (initdb refuses root)';
    }
  }
  return undefined;
}

/** Runs `cmd` as the postgres user when we are root (setpriv execs, so the PID is the server's own). */
function asPostgres(cmd: string, args: string[]): [string, string[]] {
  if (process.getuid?.() !== 0) return [cmd, args];
  return ['setpriv', ['--reuid=postgres', '--regid=postgres', '--init-groups', '--', cmd, ...args]];
}

/**
 * `durable`: fsync on, as a production server runs (the load bench compares it
 * with SQLite, which syncs its WAL); tests run with fsync off, for speed.
 */
export async function startPostgres(opts: { durable?: boolean } = {}): Promise<TestPostgres> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-pg-'));
  if (process.getuid?.() === 0) execFileSync('chown', ['postgres', dir]);
  const data = path.join(dir, 'data');
  const [initCmd, initArgs] = asPostgres(path.join(BIN, 'initdb'), [
    '-D',
    data,
    '-U',
    'postgres',
    '-A',
    'trust',
    '--no-sync',
    '--locale=C.UTF-8',
  ]);
  execFileSync(initCmd, initArgs, { stdio: 'ignore' });
  const [cmd, args] = asPostgres(path.join(BIN, 'postgres'), [
    '-D',
    data,
    '-k',
    dir,
    '-c',
    'listen_addresses=',
    '-c',
    `fsync=${opts.durable ? 'on' : 'off'}`,
    '-c',
    'max_connections=200',
  ]);
  const log = fs.openSync(path.join(dir, 'postgres.log'), 'w');
  const child: ChildProcess = spawn(cmd, args, { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = (db: string): string => `postgres://postgres@localhost/${db}?host=${encodeURIComponent(dir)}`;
  const admin = new pg.Pool({ connectionString: url('postgres'), max: 1 });
  admin.on('error', () => undefined);
  for (let tries = 0; ; tries++) {
    try {
      await admin.query('SELECT 1');
      break;
    } catch (e) {
      if (tries > 100 || child.exitCode !== null) {
        child.kill('SIGKILL');
        throw new Error(
          `PostgreSQL did not start: ${(e as Error).message}\n${fs.readFileSync(path.join(dir, 'postgres.log'), 'utf8')}`,
        );
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  let n = 0;
  return {
    pids() {
      const children = fs
        .readdirSync('/proc')
        .filter((d) => /^\d+$/.test(d))
        .filter((d) => {
          try {
            const stat = fs.readFileSync(`/proc/${d}/stat`, 'utf8');
            return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === child.pid;
          } catch {
            return false; // ended meanwhile
          }
        })
        .map(Number);
      return [child.pid!, ...children];
    },
    async database() {
      const name = `pmf_${++n}`;
      await admin.query(`CREATE DATABASE ${name}`);
      return url(name);
    },
    async stop() {
      await admin.end();
      child.kill('SIGINT'); // fast shutdown
      await exited;
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
