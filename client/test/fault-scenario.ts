// Kill -9 under load (docs/protocol.md#exactly-once-verdicts): the
// real provider runs as its own process (node + tsx, the CLI's `serve`),
// several headless clients classify their mailboxes through it at once, and
// the provider is killed with SIGKILL at random moments and restarted on the
// same store and port, again and again; some kills are aimed (a spam_request
// just sent, a spam_gc just arrived and dropped before the client saw it),
// so the paths of a lost answer are taken in every run. Afterwards every message must have
// exactly one outcome, a verdict equal to the plaintext model's, and the
// store exactly one answered claim per message and no damage.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { loadSpamAssassin } from '../../models/data/loaders.js';
import { extractFeatures } from '../../models/features/index.js';
import { loadPlainModel, plainVerdict } from '../../models/plain/index.js';
import { createConnector } from '../core/connect.js';
import { runClassification, type Classifier, type RunOutcome } from '../core/runner.js';
import type { InterruptedRequest, SocketLike, SpamSession } from '../core/session.js';
import { SCHEMAS } from '../../protocol/messages.js';
import { nodeSocket } from '../node/cli.js';
import { DirectoryStorage } from '../node/node-storage.js';
import { loadHe } from '../../wasm/ts/he.js';
import type { Store } from '../../provider-server/src/store.js';
import { openPostgresStore } from '../../provider-server/src/store-postgres.js';
import { openSqliteStore } from '../../provider-server/src/store-sqlite.js';
import { BUNDLED_MODELS } from '../../provider-server/test/real-provider.js';

export interface FaultOptions {
  users: number;
  messagesPerUser: number;
  kills: number;
  /** A postgres:// URL; SQLite in the data directory without one. */
  store?: string;
  /**
   * Pause before the next kill, ms (a random point in it is chosen), counted
   * from the first outcome after the last restart: kills land while clients
   * classify, not while they reconnect.
   */
  killWindowMs?: [number, number];
  /** Chances that a spam_request just sent, or a spam_gc just received (then dropped), kills the provider at once. */
  aimed?: { afterRequest: number; onAnswer: number };
}

export interface FaultReport {
  kills: number;
  /** Requests re-sent after a reconnect, and how many of them got a recorded answer. */
  resent: number;
  replayed: number;
  seconds: number;
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** One provider process; resolves once it listens. */
async function startProcess(env: NodeJS.ProcessEnv): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'provider-server/src/cli.ts', 'serve'], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  await new Promise<void>((resolve, reject) => {
    let err = '';
    const onData = (d: Buffer): void => {
      err += d.toString();
      if (/listening on http/.test(err)) {
        child.stderr!.off('data', onData);
        child.stderr!.resume(); // keep draining: a full pipe would block the provider
        resolve();
      }
    };
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) => reject(new Error(`provider exited (${code ?? signal}): ${err}`)));
  });
  return child;
}

const frameType = (data: unknown): number | undefined =>
  data instanceof ArrayBuffer
    ? new Uint8Array(data)[1]
    : ArrayBuffer.isView(data)
      ? (data as Uint8Array)[1]
      : undefined;

/**
 * nodeSocket with aimed faults: `kill()` right after a spam_request left, or
 * when a spam_gc arrives (the frame is then dropped, as if the connection
 * broke just before it: the answer was recorded, the client never saw it).
 * `kill` says whether a kill is coming (not while the provider restarts).
 */
function faultySocket(chance: FaultOptions['aimed'] & {}, kill: () => boolean): (url: string) => SocketLike {
  return (url) => {
    const ws = nodeSocket(url);
    return {
      get binaryType() {
        return ws.binaryType;
      },
      set binaryType(v: string) {
        ws.binaryType = v;
      },
      get readyState() {
        return ws.readyState;
      },
      send(data) {
        ws.send(data);
        if (data[1] === SCHEMAS.spam_request.type && Math.random() < chance.afterRequest) kill();
      },
      close: (code, reason) => ws.close(code, reason),
      addEventListener(type, listener) {
        if (type !== 'message') return ws.addEventListener(type, listener);
        ws.addEventListener('message', (ev) => {
          if (frameType(ev.data) === SCHEMAS.spam_gc.type && Math.random() < chance.onAnswer && kill()) return;
          listener(ev);
        });
      },
    };
  };
}

function killed(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
  });
}

export async function runFaultScenario(opts: FaultOptions): Promise<FaultReport> {
  const started = Date.now();
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-fault-'));
  const dataDir = path.join(dir, 'data');
  fs.mkdirSync(dataDir, { mode: 0o700 });
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    PMF_DATA_DIR: dataDir,
    PMF_PORT: String(port),
    PMF_WORKERS: '1',
    PMF_MODELS: `spam=${BUNDLED_MODELS.spam}`,
    ...(opts.store ? { PMF_STORE: opts.store } : {}),
  };
  const openStore = (): Promise<Store> | Store =>
    opts.store ? openPostgresStore(opts.store) : openSqliteStore(path.join(dataDir, 'store.db'));

  // Users and their mail: plaintext here (the provider never reads it), SpamAssassin test messages.
  const corpus = loadSpamAssassin().filter((e) => e.split === 'test');
  const setup = await openStore();
  const users: { id: number; token: string; mails: { id: string; raw: string }[] }[] = [];
  for (let u = 0; u < opts.users; u++) {
    const { userId, token } = await setup.addUser(`fault-${u}`);
    const mails = corpus.slice(u * opts.messagesPerUser, (u + 1) * opts.messagesPerUser).map((e, i) => ({
      id: `u${u}-m${i}@fault`,
      raw: e.raw as string,
    }));
    for (const m of mails) await setup.deliver(userId, m.id, m.raw);
    users.push({ id: userId, token, mails });
  }
  await setup.close();

  let provider = await startProcess(env);
  const he = await loadHe();
  const plain = loadPlainModel(new Uint8Array(fs.readFileSync(BUNDLED_MODELS.spam)));
  const report: FaultReport = { kills: 0, resent: 0, replayed: 0, seconds: 0 };
  const outcomes = new Map<string, RunOutcome[]>();
  let running = true;
  let progressed: (() => void) | undefined;
  let aimed: (() => void) | undefined;
  const kill = (): boolean => {
    if (!aimed) return false;
    aimed();
    aimed = undefined;
    return true;
  };
  try {
    const clients = users.map(async (u) => {
      const connector = createConnector({
        server: `http://127.0.0.1:${port}`,
        token: u.token,
        he,
        storage: new DirectoryStorage(path.join(dir, `cache-${u.id}`)),
        socket: faultySocket(opts.aimed ?? { afterRequest: 0.1, onAnswer: 0.1 }, kill),
      });
      // Counts the re-sent requests (the runner calls resume after a reconnect).
      const connect = async (n: number): Promise<Classifier<Awaited<ReturnType<SpamSession['classify']>>>> => {
        const s = await connector.connect(n);
        const resume = s.resume.bind(s);
        s.resume = async (r: InterruptedRequest) => {
          report.resent++;
          const v = await resume(r);
          if (v) report.replayed++;
          return v;
        };
        return s;
      };
      await runClassification(
        u.mails.map((m) => ({ id: m.id, raw: async () => m.raw })),
        {
          connect,
          reconnectWindowMs: 120_000,
          onOutcome: (o) => {
            outcomes.set(o.messageId, [...(outcomes.get(o.messageId) ?? []), o]);
            progressed?.();
          },
        },
      );
      return connector.model()!.spec;
    });
    const killer = (async () => {
      const [lo, hi] = opts.killWindowMs ?? [300, 1500];
      while (running && report.kills < opts.kills) {
        await new Promise<void>((resolve) => (progressed = resolve));
        progressed = undefined;
        // a random moment, or earlier when a client's frame asks for it
        await new Promise<void>((resolve) => {
          aimed = resolve;
          void sleep(lo + Math.random() * (hi - lo)).then(resolve);
        });
        aimed = undefined;
        if (!running) break;
        await killed(provider);
        report.kills++;
        provider = await startProcess(env);
      }
    })();
    const specs = await Promise.all(clients);
    running = false;
    progressed?.();
    await killer;

    // Every message: one outcome, a verdict, the plaintext model's verdict.
    for (const u of users) {
      for (const m of u.mails) {
        const got = outcomes.get(m.id) ?? [];
        assert.equal(got.length, 1, `${m.id}: ${got.length} outcomes (${got.map((o) => o.kind).join(', ')})`);
        const [o] = got;
        assert.equal(o.kind, 'verdict', `${m.id}: ${o.kind} ${'detail' in o ? o.detail : ''}`);
        if (o.kind !== 'verdict') continue;
        assert.equal(o.invalidOutput, false, `${m.id}: the garbled output decoded`);
        const reference = plainVerdict(plain, await extractFeatures(m.raw, specs[0]));
        assert.equal(o.label, reference, `${m.id}: the private verdict is the plaintext model's`);
      }
    }
  } finally {
    running = false;
    await killed(provider);
  }

  // The store: one answered claim per message, nothing half-done, no damage.
  const store = await openStore();
  for (const u of users) {
    for (const m of u.mails) assert.equal(await store.isClassified(u.id, m.id), true, `${m.id} claimed and answered`);
  }
  await store.close();
  const counts = {
    claims: 'SELECT COUNT(*) AS n FROM classified',
    open: `${'SELECT COUNT(*) AS n FROM classified'} WHERE attempt IS NOT NULL`,
  };
  let claims: number;
  let open: number;
  if (opts.store) {
    const db = new pg.Pool({ connectionString: opts.store, max: 1 });
    claims = Number((await db.query(counts.claims)).rows[0].n);
    open = Number((await db.query(counts.open)).rows[0].n);
    await db.end();
  } else {
    const db = new Database(path.join(dataDir, 'store.db'), { readonly: true });
    assert.equal(db.pragma('integrity_check', { simple: true }), 'ok');
    claims = (db.prepare(counts.claims).get() as { n: number }).n;
    open = (db.prepare(counts.open).get() as { n: number }).n;
    db.close();
  }
  assert.equal(claims, opts.users * opts.messagesPerUser, 'one claim per message');
  assert.equal(open, 0, 'no claim left without a recorded answer');
  fs.rmSync(dir, { recursive: true, force: true });
  report.seconds = (Date.now() - started) / 1000;
  return report;
}
