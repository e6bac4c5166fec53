// What /healthz answers: whether this instance can serve, checked, not
// assumed. The store must take a durable write and read it back, and every
// crypto worker must answer a no-op task, each within the deadline; a full
// disk, a failed WAL sync, a stopped PostgreSQL or a hung worker make the
// instance `failing` (HTTP 503), so a load balancer takes it out until it
// recovers. `degraded` (HTTP 200) says it serves, but replaced a crashed
// worker in the last minute (those sessions were told to reconnect).
// One probe runs at a time and its result answers every check for
// REUSE_MS, so requests to /healthz cannot load the store.
import type { ProviderCrypto } from './crypto.js';
import type { Store } from './store.js';
import type { PoolHealth } from './workers/pool.js';

export type HealthStatus = 'ok' | 'degraded' | 'failing';

export interface Check {
  ok: boolean;
  /** How long it took (the deadline when it did not finish). */
  ms: number;
  /** What went wrong (the store's or pool's own message; never a secret). */
  error?: string;
}

export interface HealthReport {
  status: HealthStatus;
  workers: PoolHealth;
  checks: { store: Check; workers: Check };
}

/** A probe's result answers the checks that come within this long after it. */
const REUSE_MS = 1000;

export interface HealthDeps {
  store: Pick<Store, 'probe'>;
  crypto: Pick<ProviderCrypto, 'ping' | 'health'>;
  /** Both checks must end within this long. */
  deadlineMs: number;
  /** This instance's row in the store (host and port). */
  instance(): string;
}

/**
 * A check against the deadline: a late or failed one is not ok. One that
 * never ends (a hung database) is not started again while it runs, so
 * checks cannot pile up behind it.
 */
function deadlined(work: () => Promise<void>, deadlineMs: number): () => Promise<Check> {
  let running: Promise<void> | undefined;
  return async () => {
    const t0 = performance.now();
    if (running) return { ok: false, ms: 0, error: 'the previous check has not ended yet' };
    const current = work().finally(() => {
      if (running === current) running = undefined;
    });
    running = current;
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`no answer within ${deadlineMs} ms`)), deadlineMs);
    });
    try {
      await Promise.race([current, late]);
      return { ok: true, ms: Math.round(performance.now() - t0) };
    } catch (e) {
      return { ok: false, ms: Math.round(performance.now() - t0), error: String((e as Error)?.message ?? e) };
    } finally {
      clearTimeout(timer);
    }
  };
}

/** The /healthz check: call it per request; probes are shared (see REUSE_MS). */
export function createHealthCheck(deps: HealthDeps): () => Promise<HealthReport> {
  const storeCheck = deadlined(() => deps.store.probe(deps.instance()), deps.deadlineMs);
  const workersCheck = deadlined(() => deps.crypto.ping(), deps.deadlineMs);
  let last: Promise<HealthReport> | undefined;
  /** When the last probe ended; undefined while it runs. */
  let endedAt: number | undefined;
  const probe = async (): Promise<HealthReport> => {
    const [store, workers] = await Promise.all([storeCheck(), workersCheck()]);
    endedAt = performance.now();
    const pool = deps.crypto.health();
    const status = !store.ok || !workers.ok ? 'failing' : pool.degraded ? 'degraded' : 'ok';
    return { status, workers: pool, checks: { store, workers } };
  };
  return () => {
    if (last && (endedAt === undefined || performance.now() - endedAt < REUSE_MS)) return last;
    endedAt = undefined;
    return (last = probe());
  };
}
