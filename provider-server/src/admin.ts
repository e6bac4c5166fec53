// The provider's view of the topics it learns (docs/threat-model.md#what-each-party-learns: the topic is
// the provider's output), for its operators: per-topic counts and one user's
// topic history, as JSON behind an admin bearer token.
//   GET /admin/topics              → { counts: [{ modelId, version, topic, name, count }] }
//   GET /admin/topics?user=NAME    → { user, optedOut, history: [{ messageId, modelId, version, topic, name, at }] }
// Admin tokens are configured by SHA-256 only (config.adminTokenSha256) and
// compared in constant time; without any, the endpoint does not exist (404).
// Wrong tokens are throttled per client address (secret-guard.ts): 429 once
// an address used up its tries for the minute. Only clients in
// internalAllowlist get here at all (http.ts).
import type http from 'node:http';
import { sendJson as send } from './json-http.js';
import type { Log } from './log.js';
import type { Metrics } from './metrics.js';
import { SecretGuard } from './secret-guard.js';
import type { Store } from './store.js';

export interface AdminDeps {
  /** Checks the admin token, throttling wrong ones; none without configured tokens. */
  guard: SecretGuard | undefined;
  store: Store;
  /** Topic names of a model version (its package labels). */
  labels(modelId: string, version: number): string[];
  log: Log;
  metrics: Metrics;
}

/** Handles /admin/… and returns true; false for every other path. */
export function createAdminHandler(deps: AdminDeps): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!url.pathname.startsWith('/admin/') || !deps.guard) return false;
    const verdict = deps.guard.check(req);
    if (verdict !== 'ok') {
      deps.metrics.authFailures.inc({ endpoint: 'admin', reason: verdict });
      deps.log.failed(`admin_${verdict}`, `admin request refused (${verdict})`, { address: deps.guard.address(req) });
      if (verdict === 'throttled')
        send(
          res,
          429,
          { error: 'too many wrong admin tokens; try again later' },
          {
            'retry-after': String(SecretGuard.retryAfter()),
          },
        );
      else send(res, 401, { error: 'admin token required' }, { 'www-authenticate': 'Bearer realm="pmf-admin"' });
      return true;
    }
    if (req.method !== 'GET' || url.pathname !== '/admin/topics') {
      send(res, 404, { error: 'not found' });
      return true;
    }
    topics(deps, url.searchParams.get('user'), res).catch(() => {
      if (!res.headersSent) send(res, 500, { error: 'internal error' });
    });
    return true;
  };
}

/** Per-topic counts, or one user's topic history. */
async function topics(deps: AdminDeps, userName: string | null, res: http.ServerResponse): Promise<void> {
  const name = (m: string, v: number, t: number): string => deps.labels(m, v)[t] ?? `topic ${t}`;
  if (userName === null) {
    const counts = (await deps.store.topicCounts()).map((r) => ({ ...r, name: name(r.modelId, r.version, r.topic) }));
    return send(res, 200, { counts });
  }
  const id = await deps.store.userId(userName);
  if (id === undefined) return send(res, 404, { error: 'no such user' });
  const history = (await deps.store.topicHistory(id)).map((r) => ({ ...r, name: name(r.modelId, r.version, r.topic) }));
  send(res, 200, { user: userName, optedOut: await deps.store.topicOptOut(id), history });
}
