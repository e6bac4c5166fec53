// The "signIn" object of the configuration file: where users of which mail
// domains sign in with their mail password (docs/connecting.md). Without it,
// neither the discovery document nor POST /signin exists.
import path from 'node:path';
import { isLoopback } from '../config.js';
import { providerOrigin } from '../../../protocol/sign-in.js';

export interface SignInConfig {
  /** The provider's origin as clients reach it (the discovery document names it). */
  publicUrl: string;
  /** Mail domains whose addresses may sign in; the discovery document lists them. */
  domains: string[];
  /** Dovecot's auth-client socket: an absolute path, or host:port on loopback (dovecot-auth.ts). */
  dovecotAuth: string;
  /** The service name Dovecot's passdb sees. */
  service: string;
  timeoutMs: number;
}

export function signInConfig(raw: unknown): SignInConfig | undefined {
  if (raw === undefined) return undefined;
  const c = { service: 'imap', timeoutMs: 20_000, ...(raw as Partial<SignInConfig>) };
  const publicUrl = providerOrigin(c.publicUrl);
  if (!publicUrl) throw new Error('config: signIn.publicUrl must be an https:// origin (http:// on loopback only)');
  if (
    !Array.isArray(c.domains) ||
    c.domains.length === 0 ||
    !c.domains.every((d) => typeof d === 'string' && /^[a-z0-9.-]{1,253}$/.test(d))
  )
    throw new Error('config: signIn.domains must list the mail domains in lowercase');
  const socket = typeof c.dovecotAuth === 'string' ? c.dovecotAuth : '';
  const tcp = /^\[?([^\]]+?)\]?:\d{1,5}$/.exec(socket);
  // The auth protocol carries passwords in the clear: a socket file, or loopback TCP.
  if (!(tcp ? isLoopback(tcp[1]) : path.isAbsolute(socket)))
    throw new Error('config: signIn.dovecotAuth must be the absolute path of a Dovecot auth socket or 127.0.0.1:PORT');
  if (typeof c.service !== 'string' || !/^[a-z0-9-]{1,32}$/.test(c.service))
    throw new Error('config: signIn.service must be a Dovecot service name like imap');
  if (!Number.isInteger(c.timeoutMs) || c.timeoutMs < 1000 || c.timeoutMs > 120_000)
    throw new Error('config: signIn.timeoutMs must be an integer in 1000..120000');
  return { publicUrl, domains: c.domains, dovecotAuth: socket, service: c.service, timeoutMs: c.timeoutMs };
}
