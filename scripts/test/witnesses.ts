// Real package-log witnesses for tests: litewitness (filippo.io/torchwood
// v0.6.1, installed into .tools/bin by scripts/setup.sh), one process per
// witness with its own SQLite state, its Ed25519 key held by an ssh-agent as
// litewitness requires. A witness learns a log the way witnessctl adds one
// (its add-log and add-key are these two rows; witnessctl itself needs a module
// the proxy here refuses). A colluding operator is a second process with the
// same key and a fresh database: it cosigns whatever it is sent first.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { freePort } from '../../e2e/fixtures/process.js';
import { tempDir } from './temp-dir.js';

const LITEWITNESS = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../.tools/bin/litewitness');
/** base64(SHA-256("")): the root witnessctl add-log starts a log at. */
const EMPTY_ROOT_B64 = '47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=';

export interface TestWitness {
  name: string;
  /** Base URL: the log POSTs to <url>/add-checkpoint. */
  url: string;
  /** The cosignature verifier key litewitness printed at start. */
  vkey: string;
  keyFile: string;
  /** What witnessctl add-log and add-key do: the witness then cosigns this log from size 0. */
  addLog(origin: string, logVkey: string): void;
  /** The tree size and root this witness last cosigned for `origin`. */
  state(origin: string): { size: number; root: string } | undefined;
  stop(): Promise<void>;
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', env });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')}: ${r.error?.message ?? r.stderr}`);
  return r.stdout;
}

function stopped(p: ChildProcess): Promise<void> {
  if (p.exitCode !== null || p.signalCode !== null) return Promise.resolve();
  return new Promise((r) => {
    p.once('exit', () => r());
    p.kill('SIGTERM');
  });
}

/** Witnesses sharing one ssh-agent; close() stops them all. */
export class TestWitnesses {
  private readonly procs: ChildProcess[] = [];

  private constructor(
    private readonly dir: string,
    private readonly agent: ChildProcess,
    private readonly sock: string,
  ) {}

  static async start(): Promise<TestWitnesses> {
    if (!fs.existsSync(LITEWITNESS)) throw new Error(`${LITEWITNESS} is missing: run scripts/setup.sh`);
    const dir = tempDir('pmf-witness-');
    const sock = path.join(dir, 'agent.sock');
    const agent = spawn('ssh-agent', ['-D', '-a', sock], { stdio: 'ignore' });
    const deadline = Date.now() + 10_000;
    while (!fs.existsSync(sock)) {
      if (Date.now() > deadline || agent.exitCode !== null) throw new Error('ssh-agent did not start');
      await new Promise((r) => setTimeout(r, 20));
    }
    return new TestWitnesses(dir, agent, sock);
  }

  /** Starts litewitness `name` with a new key, or with `sameKeyAs`'s key (a colluding twin). */
  async add(name: string, sameKeyAs?: TestWitness): Promise<TestWitness> {
    const own = path.join(this.dir, `${this.procs.length}-${name.replace(/[^A-Za-z0-9.-]/g, '_')}`);
    fs.mkdirSync(own);
    let keyFile = sameKeyAs?.keyFile;
    if (!keyFile) {
      keyFile = path.join(own, 'key');
      run('ssh-keygen', ['-q', '-t', 'ed25519', '-N', '', '-C', name, '-f', keyFile]);
      run('ssh-add', ['-q', keyFile], { ...process.env, SSH_AUTH_SOCK: this.sock });
    }
    const fingerprint = run('ssh-keygen', ['-l', '-E', 'sha256', '-f', `${keyFile}.pub`]).split(' ')[1];
    const db = path.join(own, 'witness.db');
    const port = await freePort();
    const proc = spawn(
      LITEWITNESS,
      ['-name', name, '-db', db, '-ssh-agent', this.sock, '-key', fingerprint, '-listen', `127.0.0.1:${port}`],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    this.procs.push(proc);
    const vkey = await new Promise<string>((resolve, reject) => {
      let err = '';
      let key: string | undefined;
      const timer = setTimeout(() => reject(new Error(`litewitness ${name} did not start: ${err}`)), 15_000);
      proc.stderr!.setEncoding('utf8').on('data', (d: string) => {
        err += d;
        key ??= /vkey="?([^"\s]+)/.exec(err)?.[1];
        if (key && /msg=listening/.test(err)) {
          clearTimeout(timer);
          resolve(key);
        }
      });
      proc.once('exit', (code) => reject(new Error(`litewitness ${name} exited (${code}): ${err}`)));
    });
    const withDb = <T>(f: (d: Database.Database) => T): T => {
      const d = new Database(db, { timeout: 5000 });
      try {
        return f(d);
      } finally {
        d.close();
      }
    };
    const url = `http://127.0.0.1:${port}`;
    // Answers to /add-checkpoint as soon as it listens.
    return {
      name,
      url,
      vkey,
      keyFile,
      addLog: (origin, logVkey) =>
        withDb((d) => {
          d.prepare('INSERT INTO log (origin, tree_size, tree_hash) VALUES (?, 0, ?)').run(origin, EMPTY_ROOT_B64);
          d.prepare('INSERT INTO key (origin, key) VALUES (?, ?)').run(origin, logVkey);
        }),
      state: (origin) =>
        withDb((d) => {
          const row = d.prepare('SELECT tree_size, tree_hash FROM log WHERE origin = ?').get(origin) as
            { tree_size: number; tree_hash: string } | undefined;
          return row && { size: row.tree_size, root: Buffer.from(row.tree_hash, 'base64').toString('hex') };
        }),
      stop: () => stopped(proc),
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.procs.map(stopped));
    await stopped(this.agent);
  }
}
