// Connecting without an operator (docs/connecting.md):
//   GET  /.well-known/pmf-provider.json → the discovery document (the mail
//        domain's web server proxies it here, or serves a copy as a static file)
//   POST /signin {address, password}    → 200 {token, expiresAt}
//        · 400 malformed · 401 wrong address or password · 403 a domain not served here,
//          or a browser Origin not allowed · 413 over MAX_SIGN_IN_BYTES · 415 not JSON
//        · 429 locked out (Retry-After) or too many tokens this minute · 503 Dovecot gave no verdict
// The password goes to Dovecot (dovecot-auth.ts) and nowhere else: never
// logged, never stored. Logs name the client address and the store user id
// once signed in, never what was typed (people type passwords into the
// address field). Guessing is bounded by guard.ts.
//
// No cookie or session is involved, so there is nothing for a forged
// cross-site request to ride on; still, a browser page may not post here:
// only allowed Origins (the extension's) and application/json, which a
// plain form cannot send.
import type { Log } from '../log.js';
import type http from 'node:http';
import {
  DISCOVERY_FORMAT,
  DISCOVERY_PATH,
  MAX_SIGN_IN_BYTES,
  mailDomain,
  parseSignInRequest,
  SIGN_IN_PATH,
  type DiscoveryDocument,
} from '../../../protocol/sign-in.js';
import { readBody, sendJson as send } from '../json-http.js';
import type { SignInConfig } from './config.js';
import { AuthUnavailable, type AuthVerdict } from './dovecot-auth.js';
import type { SignInGuard } from './guard.js';

export interface SignInDeps {
  config: SignInConfig;
  guard: SignInGuard;
  /** Dovecot's verdict on a login and password for a client at `remoteIp`. */
  verify(login: string, password: string, remoteIp: string): Promise<AuthVerdict>;
  /** The store user a Dovecot user name is (lmtp.userName's mapping). */
  storeUserOf(dovecotUser: string): string;
  /** The store user's id, created on its first sign-in. */
  ensureUser(name: string): Promise<number>;
  /** A fresh token and its expiry, or undefined when the user was issued too many this minute. */
  issue(userId: number): Promise<{ token: string; expiresAt: number } | undefined>;
  originAllowed(origin: string): boolean;
  /** The address per-address limits apply to (trusted proxies' X-Forwarded-For). */
  clientAddress(req: http.IncomingMessage): string;
  log: Log;
  count(outcome: string): void;
}

/** The discovery document this provider publishes. */
export const discoveryDocument = (c: SignInConfig): DiscoveryDocument => ({
  format: DISCOVERY_FORMAT,
  provider: c.publicUrl,
  domains: c.domains,
  signIn: ['password'],
});

/** Handles DISCOVERY_PATH and SIGN_IN_PATH and returns true; false for every other path. */
export function createSignInHandler(
  deps: SignInDeps,
): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  const document = JSON.stringify(discoveryDocument(deps.config));
  return (req, res) => {
    const { pathname } = new URL(req.url ?? '/', 'http://localhost');
    if (pathname === DISCOVERY_PATH) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return (send(res, 405, { error: 'method not allowed' }), true);
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(document),
        'cache-control': 'max-age=3600',
        'access-control-allow-origin': '*', // public, and read by extension pages
      });
      res.end(req.method === 'HEAD' ? undefined : document);
      return true;
    }
    if (pathname !== SIGN_IN_PATH) return false;
    signIn(deps, req, res).catch((e: Error) => {
      deps.log.error(`sign-in failed: ${e.name}`);
      if (!res.headersSent) send(res, 500, { error: 'internal error' });
    });
    return true;
  };
}

async function signIn(deps: SignInDeps, req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
  const peer = deps.clientAddress(req);
  const refuse = (status: number, outcome: string, error: string, headers: http.OutgoingHttpHeaders = {}) => {
    deps.count(outcome);
    // one line a minute per kind of refusal, however many guesses come in
    deps.log.failed(`signin_${outcome}`, `sign-in refused (${outcome})`, { address: peer });
    send(res, status, { error }, headers);
  };
  if (req.method !== 'POST') return send(res, 405, { error: 'method not allowed' }, { allow: 'POST' });
  const origin = req.headers.origin;
  if (origin !== undefined && !deps.originAllowed(origin))
    return refuse(403, 'bad_origin', 'sign-in is not allowed from this page');
  if (!/^application\/json(;|$)/i.test(req.headers['content-type'] ?? ''))
    return refuse(415, 'bad_request', 'send {"address", "password"} as application/json');
  if (Number(req.headers['content-length'] ?? 0) > MAX_SIGN_IN_BYTES)
    return refuse(413, 'bad_request', 'request too large', { connection: 'close' });
  const body = await readBody(req, MAX_SIGN_IN_BYTES);
  if (body === undefined) return refuse(413, 'bad_request', 'request too large', { connection: 'close' });
  let parsed: ReturnType<typeof parseSignInRequest>;
  try {
    parsed = parseSignInRequest(JSON.parse(body));
  } catch {
    parsed = undefined;
  }
  if (!parsed) return refuse(400, 'bad_request', 'expected {"address": "name@domain", "password": "…"}');
  const domain = mailDomain(parsed.address);
  if (!deps.config.domains.includes(domain))
    return refuse(403, 'not_served', `this provider does not serve addresses at ${domain}`);
  const login = parsed.address.toLowerCase();
  const attempt = deps.guard.begin(deps.storeUserOf(login), peer);
  if ('retryAt' in attempt) {
    const seconds = Math.ceil((attempt.retryAt - Date.now()) / 1000);
    return refuse(429, 'locked_out', 'too many wrong passwords; try again later', { 'retry-after': String(seconds) });
  }
  let verdict: AuthVerdict;
  try {
    verdict = await deps.verify(login, parsed.password, peer);
  } catch (e) {
    attempt.abandoned();
    if (!(e instanceof AuthUnavailable)) throw e;
    deps.log.failed('signin_auth_unavailable', `sign-in: ${e.message}`, { level: 'error' });
    return refuse(503, 'unavailable', 'sign-in is unavailable right now; try again in a few minutes');
  }
  if (verdict === 'fail') {
    attempt.failed();
    return refuse(401, 'wrong_password', 'wrong address or password');
  }
  attempt.succeeded();
  const userId = await deps.ensureUser(deps.storeUserOf(verdict.user));
  const issued = await deps.issue(userId);
  if (!issued) return refuse(429, 'rate_limited', 'too many sign-ins this minute; try again in a minute');
  deps.count('signed_in');
  deps.log(`signed in: user #${userId} from ${peer}`);
  send(res, 200, issued);
}
