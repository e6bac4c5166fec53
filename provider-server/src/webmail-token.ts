// POST /webmail/token: a webmail's server (the Roundcube plugin in
// ../roundcube-plugin/) asks for a fresh bearer token for the user logged in
// there, so that user's extension connects with one click and nobody copies
// tokens. Server to server only: the webmail authenticates with a shared
// secret configured here by SHA-256 only (webmailSecretSha256) and compared in
// constant time; without any configured, the endpoint does not exist (404).
//   request  Authorization: Bearer <secret>, body {"user": "<the webmail login>"}
//   answer   200 {token} · 401 wrong secret · 404 no such user · 429 too many this minute
//            (400 malformed, 413 over 1 KB)
// The login maps to a store user as the LMTP stage maps a recipient
// (lmtp.userName: Dovecot's %n or %u), so the webmail's IMAP login is the user
// its mail is delivered to. Each answer is logged with the store's user id,
// never the token.
import type http from 'node:http';
import { readBody, sendJson } from './json-http.js';
import type { Log } from './log.js';
import type { SecretGuard } from './secret-guard.js';
import { storeUserOf, type LmtpConfig } from './lmtp/config.js';

export const WEBMAIL_TOKEN_PATH = '/webmail/token';
const MAX_BODY_BYTES = 1024;

export interface WebmailTokenDeps {
  /** Checks the webmail secret, throttling wrong ones; none without configured secrets. */
  guard: SecretGuard | undefined;
  userName: LmtpConfig['userName'];
  userId(name: string): Promise<number | undefined>;
  /** A fresh token, or undefined when the user was issued too many this minute. */
  issue(userId: number): Promise<string | undefined>;
  log: Log;
  /** Counts answers by outcome (issued, unauthorized, unknown_user, rate_limited, bad_request). */
  count(outcome: string): void;
}

const send = (res: http.ServerResponse, status: number, body: unknown): void =>
  sendJson(res, status, body, status === 401 ? { 'www-authenticate': 'Bearer realm="pmf-webmail"' } : {});

/** The login named in a request body, or undefined when it is not {"user": "<1..256 printable chars>"}. */
function loginOf(body: string): string | undefined {
  let user: unknown;
  try {
    user = (JSON.parse(body) as { user?: unknown } | null)?.user;
  } catch {
    return undefined;
  }
  return typeof user === 'string' && /^[\x21-\x7e]{1,256}$/.test(user) ? user : undefined;
}

/** Handles WEBMAIL_TOKEN_PATH and returns true; false for every other path. */
export function createWebmailTokenHandler(
  deps: WebmailTokenDeps,
): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  return (req, res) => {
    const guard = deps.guard;
    if (!guard || new URL(req.url ?? '/', 'http://localhost').pathname !== WEBMAIL_TOKEN_PATH) return false;
    answer(deps, guard, req, res).catch(() => {
      if (!res.headersSent) send(res, 500, { error: 'internal error' });
    });
    return true;
  };
}

async function answer(
  deps: WebmailTokenDeps,
  guard: SecretGuard,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const peer = guard.address(req);
  const refuse = (status: number, outcome: string, error: string, why: string) => {
    deps.count(outcome);
    deps.log.failed(`webmail_token_${outcome}`, `webmail token refused (${why}) for a request from ${peer}`);
    send(res, status, { error });
  };
  if (req.method !== 'POST') return send(res, 405, { error: 'method not allowed' });
  const verdict = guard.check(req);
  if (verdict === 'throttled')
    return refuse(429, 'throttled', 'too many wrong secrets; try again later', 'too many wrong secrets');
  if (verdict === 'unauthorized')
    return refuse(401, 'unauthorized', 'webmail secret required', 'wrong or missing secret');
  const body = await readBody(req, MAX_BODY_BYTES);
  if (body === undefined) return refuse(413, 'bad_request', 'request too large', 'request too large');
  const login = loginOf(body);
  if (login === undefined) return refuse(400, 'bad_request', 'expected {"user": "<login>"}', 'malformed request');
  const userId = await deps.userId(storeUserOf(login, deps.userName));
  if (userId === undefined) return refuse(404, 'unknown_user', 'no such user', 'no such user');
  const token = await deps.issue(userId);
  if (!token)
    return refuse(
      429,
      'rate_limited',
      'too many tokens this minute; try again in a minute',
      `user #${userId}: rate limited`,
    );
  deps.count('issued');
  deps.log(`webmail token issued for user #${userId} to ${peer}`);
  send(res, 200, { token });
}
