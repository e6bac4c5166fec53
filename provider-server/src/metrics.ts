// Prometheus metrics through prom-client, on a registry per server instance
// (so several servers in one process, as in tests, do not collide).
import client from 'prom-client';
import type { PoolHealth, WorkerMemory } from './workers/pool.js';

/** What the metrics read at each scrape. */
export interface MetricSources {
  workers?: () => PoolHealth;
  workerMemory?: () => Promise<WorkerMemory[]>;
}

/** A scrape does not wait longer than this for the workers' memory (they answer between tasks). */
const WORKER_MEMORY_TIMEOUT_MS = 2_000;

export function createMetrics(sources: MetricSources = {}) {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'pmf_' });
  let restartsSeen = 0;
  return {
    registry,
    sessionsActive: new client.Gauge({
      name: 'pmf_sessions_active',
      help: 'Open WebSocket sessions',
      registers: [registry],
    }),
    sessionsTotal: new client.Counter({
      name: 'pmf_sessions_total',
      help: 'WebSocket sessions opened',
      registers: [registry],
    }),
    refusedConnections: new client.Counter({
      name: 'pmf_connections_refused_total',
      help: 'WebSocket upgrades refused, by HTTP status (403 origin, 429 per-address limits, 503 full)',
      labelNames: ['status'],
      registers: [registry],
    }),
    droppedConnections: new client.Counter({
      name: 'pmf_connections_dropped_total',
      help: 'Sessions closed by the server for misbehaviour, by reason',
      labelNames: ['reason'],
      registers: [registry],
    }),
    requests: new client.Counter({
      name: 'pmf_requests_total',
      help: 'Frames received, by message type',
      labelNames: ['type'],
      registers: [registry],
    }),
    errors: new client.Counter({
      name: 'pmf_errors_total',
      help: 'Error frames sent, by error code',
      labelNames: ['kind'],
      registers: [registry],
    }),
    cryptoSeconds: new client.Histogram({
      name: 'pmf_crypto_seconds',
      help: 'Wall time of crypto operations in the worker pool',
      labelNames: ['op'],
      buckets: [0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
      registers: [registry],
    }),
    topics: new client.Counter({
      name: 'pmf_topics_total',
      help: 'Topics recorded, by model and topic index (at most B series per model)',
      labelNames: ['model', 'topic'],
      registers: [registry],
    }),
    modelDownloads: new client.Counter({
      name: 'pmf_model_downloads_total',
      help: 'Model package GETs (full or ranged)',
      labelNames: ['model', 'status'],
      registers: [registry],
    }),
    signIns: new client.Counter({
      name: 'pmf_sign_ins_total',
      help: 'POST /signin answers by outcome (signed_in, wrong_password, locked_out, unavailable, not_served, bad_request, bad_origin, rate_limited)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    webmailTokens: new client.Counter({
      name: 'pmf_webmail_tokens_total',
      help: 'POST /webmail/token answers, by outcome (issued, unauthorized, unknown_user, rate_limited, bad_request)',
      labelNames: ['outcome'],
      registers: [registry],
    }),
    workerRestarts: new client.Counter({
      name: 'pmf_worker_restarts_total',
      help: 'Crypto workers replaced after dying (their sessions lost their OT state)',
      registers: [registry],
      collect() {
        const restarts = sources.workers?.().restarts ?? 0;
        this.inc(restarts - restartsSeen);
        restartsSeen = restarts;
      },
    }),
    workerMemory: new client.Gauge({
      name: 'pmf_worker_memory_bytes',
      help: "Each crypto worker's memory: V8 heap, and external (WebAssembly memory: keys, user keys, OT pools)",
      labelNames: ['worker', 'kind'],
      registers: [registry],
      async collect() {
        if (!sources.workerMemory) return;
        let timer: NodeJS.Timeout | undefined;
        const late = new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), WORKER_MEMORY_TIMEOUT_MS)));
        const workers = await Promise.race([sources.workerMemory().catch(() => undefined), late]);
        clearTimeout(timer);
        this.reset();
        workers?.forEach((m, i) => {
          this.set({ worker: String(i), kind: 'heap' }, m.heapBytes);
          this.set({ worker: String(i), kind: 'external' }, m.externalBytes);
        });
      },
    }),
    storeSeconds: new client.Histogram({
      name: 'pmf_store_seconds',
      help: 'Time until a store statement resolved (a durable write: until on disk), by statement kind',
      labelNames: ['statement'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5],
      registers: [registry],
    }),
    storeErrors: new client.Counter({
      name: 'pmf_store_errors_total',
      help: 'Store statements that failed other than by a constraint (the store unreachable, disk full, a failed sync)',
      labelNames: ['statement'],
      registers: [registry],
    }),
    authFailures: new client.Counter({
      name: 'pmf_auth_failures_total',
      help: 'Requests to secret-protected HTTP endpoints refused, by endpoint and reason (unauthorized, throttled)',
      labelNames: ['endpoint', 'reason'],
      registers: [registry],
    }),
    internalRefused: new client.Counter({
      name: 'pmf_internal_refused_total',
      help: 'Requests for internal endpoints (/metrics, /admin) from outside internalAllowlist',
      registers: [registry],
    }),
    blocklistItems: new client.Counter({
      name: 'pmf_blocklist_items_total',
      help: 'Blinded blocklist items evaluated, by list (the provider learns how many, never which)',
      labelNames: ['list'],
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
