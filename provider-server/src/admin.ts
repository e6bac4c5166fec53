// The provider's view of the topics it learns (docs/threat-model.md#what-each-party-learns: the topic is
// the provider's output), for its operators: per-topic counts and one user's
// topic history, as JSON behind an admin bearer token.
//   GET /admin/topics              → { counts: [{ modelId, version, topic, name, count }] }
//   GET /admin/topics?user=NAME    → { user, optedOut, history: [{ messageId, modelId, version, topic, name, at }] }
// Admin tokens are configured by SHA-256 only (config.adminTokenSha256) and
// compared in constant time; without any, the endpoint does not exist (404).
import { createHash, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import { sendJson as send } from './json-http.js';
import type { Store } from './store.js';

export interface AdminDeps {
  /** Hex SHA-256 of each accepted admin token. */
  tokenSha256: readonly string[];
  store: Store;
  /** Topic names of a model version (its package labels). */
  labels(modelId: string, version: number): string[];
}

/** Whether an Authorization header carries a bearer secret whose SHA-256 is one of hashes (constant time). */
export function authorized(header: string | undefined, hashes: readonly Buffer[]): boolean {
  const m = /^Bearer ([\x21-\x7e]{1,256})$/.exec(header ?? '');
  if (!m) return false;
  const digest = createHash('sha256').update(m[1]).digest();
  let ok = false;
  for (const h of hashes) ok = timingSafeEqual(digest, h) || ok; // every hash compared, whichever matches
  return ok;
}

/** Handles /admin/… and returns true; false for every other path. */
export function createAdminHandler(deps: AdminDeps): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  const hashes = deps.tokenSha256.map((h) => Buffer.from(h, 'hex'));
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (!url.pathname.startsWith('/admin/') || hashes.length === 0) return false;
    if (!authorized(req.headers.authorization, hashes)) {
      send(res, 401, { error: 'admin token required' }, { 'www-authenticate': 'Bearer realm="pmf-admin"' });
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
