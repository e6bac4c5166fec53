// Prometheus metrics through prom-client, on a registry per server instance
// (so several servers in one process, as in tests, do not collide).
import client from 'prom-client';

export function createMetrics() {
  const registry = new client.Registry();
  client.collectDefaultMetrics({ register: registry, prefix: 'pmf_' });
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
    blocklistItems: new client.Counter({
      name: 'pmf_blocklist_items_total',
      help: 'Blinded blocklist items evaluated, by list (the provider learns how many, never which)',
      labelNames: ['list'],
      registers: [registry],
    }),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
