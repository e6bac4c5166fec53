// A user's own bearer tokens over HTTP, authenticated with any one of them:
// a user who lost a device, or sees a token they do not know, revokes it
// without asking the operator.
//   GET    /tokens        → 200 {tokens: [{id, kind, createdAt, lastUsedAt, expiresAt, current}]}
//   DELETE /tokens/<id>   → 204, or 404 when the user has no token by that id
//   DELETE /tokens        → 200 {revoked: n}: every token of the user, this one too
// 401 without a live token of the user (WWW-Authenticate: Bearer); 405 for
// other methods. Nothing is read from a request body.
import type http from 'node:http';
import type { TokenPolicy, Tokens } from './tokens.js';

export const TOKENS_PATH = '/tokens';

export interface TokenEndpointDeps {
  tokens: Pick<Tokens, 'authenticate' | 'list' | 'revoke' | 'revokeAll'>;
  policy: TokenPolicy;
}

function send(res: http.ServerResponse, status: number, body?: unknown): void {
  const text = body === undefined ? '' : JSON.stringify(body);
  res.writeHead(status, {
    ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    'content-length': Buffer.byteLength(text),
    'cache-control': 'no-store',
    ...(status === 401 && { 'www-authenticate': 'Bearer realm="pmf", error="invalid_token"' }),
  });
  res.end(text);
}

/** Handles /tokens and /tokens/<id> and returns true; false for every other path. */
export function createTokenEndpoint(
  deps: TokenEndpointDeps,
): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  return (req, res) => {
    const { pathname } = new URL(req.url ?? '/', 'http://localhost');
    const m = /^\/tokens(?:\/([^/]{1,64}))?$/.exec(pathname);
    if (!m) return false;
    answer(deps, req, res, m[1]).catch(() => {
      if (!res.headersSent) send(res, 500, { error: 'internal error' });
    });
    return true;
  };
}

async function answer(
  deps: TokenEndpointDeps,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  id: string | undefined,
): Promise<void> {
  const method = req.method ?? '';
  if (!(method === 'GET' && id === undefined) && method !== 'DELETE')
    return send(res, 405, { error: 'method not allowed' });
  const bearer = /^Bearer ([\x21-\x7e]{1,256})$/.exec(req.headers.authorization ?? '')?.[1] ?? '';
  const me = await deps.tokens.authenticate(bearer, deps.policy);
  if (typeof me !== 'object')
    return send(res, 401, { error: me === 'expired' ? 'this token expired' : 'a valid bearer token is required' });
  if (method === 'GET') {
    const tokens = (await deps.tokens.list(me.userId, deps.policy)).map((t) => ({ ...t, current: t.id === me.id }));
    return send(res, 200, { tokens });
  }
  if (id === undefined) return send(res, 200, { revoked: await deps.tokens.revokeAll(me.userId) });
  if (!(await deps.tokens.revoke(me.userId, id))) return send(res, 404, { error: 'no such token' });
  send(res, 204);
}
