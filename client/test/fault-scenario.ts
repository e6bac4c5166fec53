// Kill -9 under load (docs/protocol.md#exactly-once-verdicts): the
// real provider runs as its own process (node + tsx, the CLI's `serve`, or
// the compiled server), several headless clients classify their mailboxes
// through it at once (spam verdicts, or topics), and the provider is killed
// with SIGKILL at random moments and restarted on the same store and port,
// again and again (or only its crypto worker is killed, and the provider
// replaces it: its sessions' OT state is lost with it); some
// kills are aimed (a request just sent, its garbled answer just arrived and
// dropped before the client saw it, topic labels just sent), so the paths of
// a lost answer are taken in every run. Afterwards every message must have
// exactly one outcome and a result equal to the plaintext model's, and the
// store exactly one answered claim per message and no damage.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { loadSpamAssassin, loadTwentyNews } from '../../models/data/loaders.js';
import { extractFeatures } from '../../models/features/index.js';
import { decomposedTopic, loadPlainModel, plainVerdict } from '../../models/plain/index.js';
import { createConnector } from '../core/connect.js';
import { runClassification, type Classifier, type RunOutcome } from '../core/runner.js';
import type { SocketFactory } from '../core/provider-session.js';
import type { SpamVerdict } from '../core/session.js';
import { MemoryReplayStore, ReplayLog } from '../core/topic-replay.js';
import { topicConnector, type TopicModel, type TopicResult } from '../core/topic-session.js';
import { SCHEMAS } from '../../protocol/messages.js';
import { DirectoryStorage } from '../node/node-storage.js';
import { loadHe } from '../../wasm/ts/he.js';
import type { Store } from '../../provider-server/src/store.js';
import { openPostgresStore } from '../../provider-server/src/store-postgres.js';
import { openSqliteStore } from '../../provider-server/src/store-sqlite.js';
import { BUNDLED_MODELS } from '../../provider-server/test/real-provider.js';
import { tappedSocket } from './tapped-socket.js';

const CANDIDATES = path.resolve('models/default/topics-candidates.pmfm');

export interface FaultOptions {
  /** What the clients ask for: spam verdicts (the default) or topics (the bundled topic model). */
  task?: 'spam' | 'topics';
  users: number;
  messagesPerUser: number;
  kills: number;
  /**
   * What is killed: the provider process (the default; restarted), or one of
   * its crypto workers (fixtures/kill-worker.mjs; the provider replaces it).
   */
  kill?: 'process' | 'worker';
  /** The compiled provider CLI (npm run build:server) to run with plain node, instead of the sources under tsx. */
  compiled?: string;
  /** A postgres:// URL; SQLite in the data directory without one. */
  store?: string;
  /**
   * Pause before the next kill, ms (a random point in it is chosen), counted
   * from the first outcome after the last restart: kills land while clients
   * classify, not while they reconnect.
   */
  killWindowMs?: [number, number];
  /**
   * Chances that a request just sent (for topics, also topic_labels), or its
   * garbled answer just received (then dropped), kills the provider at once.
   */
  aimed?: { afterRequest: number; onAnswer: number };
  /**
   * Each message takes the client up to this long to read (a random part of
   * it, as decrypting it would), so sessions also sit idle between requests.
   */
  thinkMs?: number;
}

/**
 * A crypto worker killed twice while three clients classify: soon after an
 * outcome, while that client reads its next message (its session idle), or
 * right after a request left (its task in the worker).
 */
export const WORKER_KILLS: FaultOptions = {
  kill: 'worker',
  users: 3,
  messagesPerUser: 8,
  kills: 2,
  killWindowMs: [0, 100],
  aimed: { afterRequest: 0.2, onAnswer: 0 },
  thinkMs: 500,
};

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

const KILL_WORKER = path.resolve('provider-server/test/fixtures/kill-worker.mjs');

/**
 * One provider process (SIGUSR2 kills one of its crypto workers); resolves
 * once it listens. Its log is appended to `log.text` (the last 16 KB are kept).
 */
async function startProcess(env: NodeJS.ProcessEnv, log: { text: string }, compiled?: string): Promise<ChildProcess> {
  const cli = compiled ? [compiled] : ['--import', 'tsx', 'provider-server/src/cli.ts'];
  const child = spawn(process.execPath, ['--import', KILL_WORKER, ...cli, 'serve'], {
    env,
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  // Drained all along: a full pipe would block the provider.
  child.stderr!.on('data', (d: Buffer) => (log.text = (log.text + d.toString()).slice(-16_384)));
  await new Promise<void>((resolve, reject) => {
    let own = '';
    const onData = (d: Buffer): void => {
      own += d.toString();
      if (!/listening on http/.test(own)) return;
      child.stderr!.off('data', onData);
      resolve();
    };
    child.stderr!.on('data', onData);
    child.once('exit', (code, signal) => reject(new Error(`provider exited (${code ?? signal}): ${own}`)));
  });
  return child;
}

/** The frames a task's aimed kills watch: what the client sends, and the garbled answer it gets. */
const AIMED: Record<'spam' | 'topics', { sent: number[]; answer: number }> = {
  spam: { sent: [SCHEMAS.spam_request.type], answer: SCHEMAS.spam_gc.type },
  topics: { sent: [SCHEMAS.topic_request.type, SCHEMAS.topic_labels.type], answer: SCHEMAS.topic_gc.type },
};

/**
 * nodeSocket with aimed faults: `kill()` right after a request (or topic
 * labels) left, or when its garbled answer arrives (the frame is then
 * dropped, as if the connection broke just before it: the answer was
 * recorded, the client never saw it). `kill` says whether a kill is coming
 * (not while the provider restarts).
 */
function faultySocket(
  frames: { sent: number[]; answer: number },
  chance: FaultOptions['aimed'] & {},
  kill: () => boolean,
): SocketFactory {
  return tappedSocket({
    sent: (type) => {
      if (frames.sent.includes(type!) && Math.random() < chance.afterRequest) kill();
    },
    drop: (type) => type === frames.answer && Math.random() < chance.onAnswer && kill(),
  });
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
  const task = opts.task ?? 'spam';
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-fault-'));
  const dataDir = path.join(dir, 'data');
  fs.mkdirSync(dataDir, { mode: 0o700 });
  const port = await freePort();
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    PMF_DATA_DIR: dataDir,
    PMF_PORT: String(port),
    PMF_WORKERS: '1',
    PMF_MODELS: `${task}=${BUNDLED_MODELS[task]}`,
    ...(opts.store ? { PMF_STORE: opts.store } : {}),
  };
  const openStore = (): Promise<Store> | Store =>
    opts.store ? openPostgresStore(opts.store) : openSqliteStore(path.join(dataDir, 'store.db'));

  // Users and their mail: plaintext here (the provider never reads it), SpamAssassin or 20 Newsgroups
  // test messages (cross-posts left out: the replay log would rightly refuse the second copy).
  const bodies = new Set<string>();
  const corpus = (task === 'spam' ? loadSpamAssassin() : loadTwentyNews()).filter((e) => {
    const body = String(e.raw)
      .split(/\r?\n\r?\n/)
      .slice(1)
      .join('\n\n');
    return e.split === 'test' && !bodies.has(body) && bodies.add(body);
  });
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

  const log = { text: '' };
  const start = () => startProcess(env, log, opts.compiled);
  let provider = await start();
  const he = await loadHe();
  const plain = loadPlainModel(new Uint8Array(fs.readFileSync(BUNDLED_MODELS[task])));
  const report: FaultReport = { kills: 0, resent: 0, replayed: 0, seconds: 0 };
  const outcomes = new Map<string, RunOutcome<SpamVerdict | TopicResult>[]>();
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
      const common = {
        server: `http://127.0.0.1:${port}`,
        token: u.token,
        he,
        storage: new DirectoryStorage(path.join(dir, `cache-${u.id}`)),
        socket: faultySocket(AIMED[task], opts.aimed ?? { afterRequest: 0.1, onAnswer: 0.1 }, kill),
      };
      const connector =
        task === 'spam'
          ? createConnector(common)
          : topicConnector({ ...common, replay: await ReplayLog.open(new MemoryReplayStore()) });
      // Counts the re-sent requests (the runner calls resume after a reconnect).
      const connect = async (n: number): Promise<Classifier<SpamVerdict | TopicResult>> => {
        const s: Classifier<SpamVerdict | TopicResult> = await connector.connect(n);
        return {
          classify: (...args) => s.classify(...args),
          close: () => s.close(),
          resume: async (r) => {
            report.resent++;
            const v = await s.resume!(r);
            if (v) report.replayed++;
            return v;
          },
        };
      };
      await runClassification(
        u.mails.map((m) => ({ id: m.id, raw: async () => (await sleep(Math.random() * (opts.thinkMs ?? 0)), m.raw) })),
        {
          connect,
          reconnectWindowMs: 120_000,
          onOutcome: (o) => {
            outcomes.set(o.messageId, [...(outcomes.get(o.messageId) ?? []), o]);
            progressed?.();
          },
        },
      );
      return connector.model()!;
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
        report.kills++;
        if (opts.kill === 'worker') {
          provider.kill('SIGUSR2');
          continue;
        }
        await killed(provider);
        provider = await start();
      }
    })();
    const models = await Promise.all(clients);
    running = false;
    progressed?.();
    await killer;

    // Every message: one outcome and the plaintext model's result. A topic whose labels were decoded
    // but whose topic_ack was lost ends as already_classified on the client; its topic is checked in the store.
    const spec = models[0].spec;
    const candidates = task === 'topics' ? loadPlainModel(new Uint8Array(fs.readFileSync(CANDIDATES))) : undefined;
    const check = await openStore();
    for (const u of users) {
      for (const m of u.mails) {
        const got = outcomes.get(m.id) ?? [];
        assert.equal(got.length, 1, `${m.id}: ${got.length} outcomes (${got.map((o) => o.kind).join(', ')})`);
        const [o] = got;
        const features = await extractFeatures(m.raw, spec);
        if (task === 'topics') {
          assert.ok(
            o.kind === 'verdict' || o.kind === 'already_classified',
            `${m.id}: ${o.kind} ${'detail' in o ? o.detail : ''}`,
          );
          const bPrime = (models[0] as TopicModel).bPrime;
          assert.equal(
            await check.topicOf(u.id, m.id),
            decomposedTopic(plain, candidates!, features, bPrime),
            `${m.id}: the plaintext topic`,
          );
          continue;
        }
        assert.equal(o.kind, 'verdict', `${m.id}: ${o.kind} ${'detail' in o ? o.detail : ''}`);
        if (o.kind !== 'verdict' || !('spam' in o)) continue;
        assert.equal(o.invalidOutput, false, `${m.id}: the garbled output decoded`);
        assert.equal(o.label, plainVerdict(plain, features), `${m.id}: the private verdict is the plaintext model's`);
      }
    }
    await check.close();
    if (opts.kill === 'worker') {
      // Each death is in the provider's log, where the worker-restart alert sends the operator (deploy/alerts.yml).
      const deaths = log.text.split('\n').filter((l) => l.includes('"msg":"a crypto worker died and was replaced'));
      assert.ok(deaths.length >= 1 && deaths.length <= report.kills, `${deaths.length} deaths logged`);
    }
  } catch (e) {
    throw new Error(`${(e as Error).message}\n--- the provider's log\n${log.text}`, { cause: e });
  } finally {
    running = false;
    await killed(provider);
  }

  // The store: one answered claim per message, nothing half-done, no damage.
  const store = await openStore();
  for (const u of users) {
    for (const m of u.mails)
      assert.equal(await store.isClassified(u.id, m.id, task), true, `${m.id} claimed and answered`);
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
