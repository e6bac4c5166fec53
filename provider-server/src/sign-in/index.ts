// Sign-in with the mail account (docs/connecting.md): the pieces wired from
// the server's configuration. Without a "signIn" section, nothing is served.
import type http from 'node:http';
import { clientAddress, originAllowed, type ServerConfig } from '../config.js';
import { lmtpConfig, storeUserOf } from '../lmtp/config.js';
import type { Store } from '../store.js';
import { signInConfig } from './config.js';
import { dovecotVerify } from './dovecot-auth.js';
import { createSignInHandler, type SignInDeps } from './endpoint.js';
import { SignInGuard } from './guard.js';

export function signInHandler(
  config: ServerConfig,
  deps: { store: Pick<Store, 'ensureUser'> } & Pick<SignInDeps, 'issue' | 'log' | 'count'>,
): ((req: http.IncomingMessage, res: http.ServerResponse) => boolean) | undefined {
  const c = signInConfig(config.signIn);
  if (!c) return undefined;
  const userName = lmtpConfig(config.lmtp, {}).userName;
  const auth = { socket: c.dovecotAuth, service: c.service, timeoutMs: c.timeoutMs };
  return createSignInHandler({
    ...deps,
    config: c,
    guard: new SignInGuard(),
    verify: (login, password, ip) => dovecotVerify(auth, login, password, ip),
    storeUserOf: (user) => storeUserOf(user, userName),
    ensureUser: (name) => deps.store.ensureUser(name),
    originAllowed: (origin) => originAllowed(origin, config.allowedOrigins),
    clientAddress: (req) =>
      clientAddress(req.socket.remoteAddress ?? '', req.headers['x-forwarded-for'], config.trustedProxies),
  });
}
