// The load generator of the load suite (suites/load.ts): users with delivered
// messages, sessions that reconnect when their key budget or messages run
// out, the closed and the paced loop, session setups, and the throughput of
// instances behind HAProxy.
import path from 'node:path';
import { ProtocolError } from '../protocol/errors.js';
import { ensurePackage } from '../client/core/download.js';
import { ConnectionClosed } from '../client/core/interrupted-request.js';
import { loadModel, type LoadedModel } from '../client/core/provider-session.js';
import { nodeSocket } from '../client/node/cli.js';
import { DirectoryStorage } from '../client/node/node-storage.js';
import { extractFeatures } from '../models/features/index.js';
import { USER_KEY_BUDGET_MAX } from '../provider-server/src/limits.js';
import { startCluster, type Cluster } from '../provider-server/test/cluster.js';
import type { Accumulator, He } from '../wasm/ts/he.js';
import { cpuSince, type CpuShare } from './load-cpu.js';
import { inFlight, LoadSession, setUpSession } from './load-client.js';
import { syntheticEmail } from './private-pair.js';

/**
 * Emails per OT top-up (the client's batch size). A session's first batch
 * covers a random 1 to 64 emails, so sessions top up at independent times,
 * as independent clients do. Opened together and run at one rate, the 200
 * sessions all topped up at once: the provider's worker then had 200
 * extensions queued ahead of the emails, and the paced row's p99 was that
 * queue (150–400 ms, against 40–100 ms with the batches spread).
 */
export const TOPUP_EMAILS = 64;
/**
 * The generator evaluates one garbled circuit in this many (each user's
 * first, ninth, ...) and checks its output: evaluating all of them took
 * about a sixth of its main thread (a CPU profile of the closed loop), on
 * the cores the provider is measured on.
 */
export const CHECK_EVERY = 8;
/** Sessions opened at once: the provider sets them up one per worker anyway. */
export const SETUP_IN_FLIGHT = 8;
export const MESSAGES_PER_USER = 400;
/** Capacity, not abuse protection, is measured: the per-user and per-address limits are lifted. */
export const LIMITS = {
  requestsPerMinute: 1_000_000,
  hellosPerMinute: 1_000_000,
  connectionsPerMinutePerAddress: 1_000_000,
  connectionsPerMinutePerPrefix: 1_000_000,
  connectionsPerAddress: 1_000_000,
  maxUnauthenticated: 10_000,
  unauthenticatedPerPrefix: 10_000,
  helloTimeoutMs: 120_000,
  // Setting up 200 sessions takes minutes on a busy machine: the first must not idle out meanwhile.
  idleTimeoutMs: 3_600_000,
};

export interface Sizes {
  sessions: number;
  otPoolSessions: number;
  closedMs: number;
  pacedMs: number;
  setups: number;
  victimEmails: number;
  scaleSessions: number;
  scaleMs: number;
}
/** One user's session slot: reconnects when its key budget or its messages run out. */
export interface Slot {
  token: string;
  model: LoadedModel;
  next: number;
  session?: LoadSession;
  /** The key epoch the provider named in the last session set up by setUp. */
  epoch?: number;
}

export interface Load {
  he: He;
  url: string;
  acc: Accumulator;
  slots: Slot[];
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export function p99(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * 0.99))];
}

/** Users with delivered messages, their package and one email's dot product. */
export async function prepare(he: He, cluster: Cluster, users: number, tag: string): Promise<Load> {
  const names = Array.from({ length: users }, (_, i) => `${tag}${i}`);
  const messages = Array.from({ length: MESSAGES_PER_USER }, (_, i) => `m${i}`);
  const tokens = await cluster.provision(names.map((name) => ({ name, messages })));
  const pkg = await ensurePackage({
    baseUrl: cluster.url,
    modelId: 'spam',
    storage: new DirectoryStorage(path.join(cluster.dir, 'client')),
  });
  const model = loadModel(he, pkg);
  const acc = model.model.dot(await extractFeatures(syntheticEmail(692, 1), model.spec));
  return {
    he,
    url: `${cluster.url.replace(/^http/, 'ws')}/session`,
    acc,
    // Each user keeps its own key-switching key; the encrypted model is shared.
    slots: names.map((n) => ({ token: tokens.get(n)!, model: { ...model, userKey: undefined }, next: 0 })),
  };
}

/** Makes sure the slot's session can classify `n` more emails, reconnecting if not. */
export async function ready(load: Load, slot: Slot, n: number): Promise<LoadSession | undefined> {
  if (slot.next + n > MESSAGES_PER_USER) return undefined;
  if (slot.session && slot.session.budget >= n) return slot.session;
  slot.session?.close();
  slot.session = await LoadSession.open(
    {
      url: load.url,
      token: slot.token,
      model: slot.model,
      he: load.he,
      socket: nodeSocket,
      expectedEmails: 1 + Math.floor(Math.random() * TOPUP_EMAILS),
    },
    load.acc,
  );
  return slot.session.budget >= n ? slot.session : undefined;
}

export async function classifyNext(slot: Slot, session: LoadSession): Promise<void> {
  const n = slot.next++;
  if (!(await session.classify(`m${n}`, TOPUP_EMAILS, n % CHECK_EVERY === 0))) {
    throw new Error(`invalid garbled output for m${n}`);
  }
}

/** Emails each slot classifies before a closed loop's clock starts: the provider's hot paths compiled, as in steady operation. */
const WARM_UP_EMAILS = 2;

/**
 * Every slot classifies back to back for `ms` (at most `maxPerSlot` emails,
 * WARM_UP_EMAILS of them before the clock starts). The rate is taken while
 * every slot is still classifying: from the start until the first slot has
 * sent all it may, so the sessions that finish early do not leave the
 * provider idle inside the measured time (`wholePerS`: until the last one).
 * A provider error or a dropped connection (today: the shared SQLite
 * store's "database is locked" between instances) costs the slot a new
 * session, as it would a real client, and is counted. `pids`: the provider
 * processes whose CPU is reported (over the whole loop, per email).
 */
export async function closedLoop(
  load: Load,
  ms: number,
  maxPerSlot: number,
  pids: number[],
  storePids?: () => number[],
): Promise<{ perS: number; wholePerS: number; errors: number; cpu: CpuShare }> {
  await inFlight(
    SETUP_IN_FLIGHT,
    load.slots.map((s) => () => ready(load, s, maxPerSlot)),
  );
  let errors = 0;
  /** The slot's next email: classified, failed (the slot goes on with a new session) or none left. */
  const classify = async (slot: Slot): Promise<'ok' | 'failed' | 'done'> => {
    const session = await ready(load, slot, 1);
    if (!session) return 'done';
    try {
      await classifyNext(slot, session);
      return 'ok';
    } catch (e) {
      if (!(e instanceof ConnectionClosed || (e instanceof ProtocolError && e.code === 'internal'))) throw e;
      errors++;
      session.close();
      slot.session = undefined;
      return 'failed';
    }
  };
  const warm = Math.min(WARM_UP_EMAILS, maxPerSlot - 1);
  await Promise.all(
    load.slots.map(async (slot) => {
      for (let k = 0; k < warm && (await classify(slot)) !== 'done'; k++);
    }),
  );
  const cpuUsed = cpuSince(pids, storePids);
  const t0 = performance.now();
  const end = t0 + ms;
  let count = 0;
  let allBusy: { count: number; at: number } | undefined;
  await Promise.all(
    load.slots.map(async (slot) => {
      for (let k = warm; k < maxPerSlot && performance.now() < end; k++) {
        const outcome = await classify(slot);
        if (outcome === 'done') break;
        if (outcome === 'ok') count++;
      }
      allBusy ??= { count, at: performance.now() };
    }),
  );
  const seconds = (performance.now() - t0) / 1000;
  const busy = allBusy!;
  return { perS: busy.count / ((busy.at - t0) / 1000), wholePerS: count / seconds, errors, cpu: cpuUsed() };
}

/**
 * Every slot sends `perS` emails a second for `ms`; latencies from each
 * scheduled send time. An overloaded provider would take far longer than
 * `ms`: at twice `ms` the rest is given up and counted as late by at least
 * the time waited (so the p99 is then a lower bound).
 */
export async function paced(
  load: Load,
  slots: Slot[],
  perS: number,
  ms: number,
  pids: number[] = [],
): Promise<{ latencies: number[]; cpu: CpuShare }> {
  const n = Math.ceil((perS * ms) / 1000);
  await inFlight(
    SETUP_IN_FLIGHT,
    slots.map((s) => () => ready(load, s, n)),
  );
  const latencies: number[] = [];
  const cpuUsed = cpuSince(pids);
  const t0 = performance.now();
  const giveUp = t0 + 2 * ms;
  await Promise.all(
    slots.map(async (slot) => {
      const phase = Math.random() * (1000 / perS);
      for (let k = 0; slot.session && k < n; k++) {
        const due = t0 + phase + (k * 1000) / perS;
        const now = performance.now();
        if (now > giveUp) {
          latencies.push(now - due);
          continue;
        }
        if (due > now) await sleep(due - now);
        await classifyNext(slot, slot.session);
        latencies.push(performance.now() - due);
      }
    }),
  );
  return { latencies, cpu: cpuUsed() };
}

/**
 * Sets up sessions (provider half) for the slots' users, `SETUP_IN_FLIGHT` at
 * a time; sessions per second. Returning users hold their current key: each
 * user's first session here, which fetches the key-switching key of the epoch
 * the earlier rows rotated to, is not timed.
 */
export async function sessionRate(load: Load, n: number): Promise<number> {
  const slots = Array.from({ length: n }, (_, i) => load.slots[i % load.slots.length]);
  const setUpAll = () =>
    inFlight(
      SETUP_IN_FLIGHT,
      slots.map((slot) => () => setUp(load, slot)),
    );
  await setUpAll();
  const t0 = performance.now();
  await setUpAll();
  return n / ((performance.now() - t0) / 1000);
}

/** Opens a session (provider half) for the slot's user, as a client holding the key of its last session. */
export async function setUp(load: Load, slot: Slot): Promise<void> {
  slot.epoch = await setUpSession(
    load.he,
    load.url,
    slot.token,
    slot.model,
    slot.epoch ?? slot.model.userKey?.epoch ?? 0,
  );
}

export function closeAll(load: Load): void {
  for (const s of load.slots) {
    s.session?.close();
    s.model.userKey?.ksk.dispose();
  }
  load.acc.dispose();
  load.slots[0]?.model.model.dispose(); // the encrypted model all slots share
}

/** Runs `fn`; a failure carries the end of each provider's log. */
export async function withLogs<T>(cluster: Cluster, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (e) {
    const logs = cluster.instances.map((i) => `--- provider ${i.pid}\n${i.log()}`).join('\n');
    throw new Error(`${(e as Error).message}\n${logs}`, { cause: e });
  }
}

/** Closed-loop throughput of `instances` behind HAProxy. */
export async function throughputBehindHaproxy(
  he: He,
  instances: number,
  z: Sizes,
  store?: string,
): Promise<{ perS: number; errors: number; cpu: CpuShare }> {
  const cluster = await startCluster({ instances, haproxy: true, limits: LIMITS, store });
  try {
    return await withLogs(cluster, async () => {
      const load = await prepare(he, cluster, z.scaleSessions, `x${instances}_`);
      try {
        return await closedLoop(
          load,
          z.scaleMs,
          USER_KEY_BUDGET_MAX,
          cluster.instances.map((i) => i.pid),
        );
      } finally {
        closeAll(load);
      }
    });
  } finally {
    await cluster.close();
  }
}
