// Settings of the LMTP stage (`provider-server lmtp`): the "lmtp" object of
// the configuration file, overlaid by PMF_LMTP_PORT and PMF_LMTP_RELAY.
// LMTP has no authentication, so the stage listens on loopback only: the
// MTA in front of it runs on the same host, as Dovecot's LMTP usually does.
import path from 'node:path';
import { isLoopback } from '../config.js';
import type { StoredCheckConfig } from './stored-check.js';

export interface LmtpConfig {
  host: string;
  port: number;
  /** Dovecot's LMTP listener; `timeoutMs` bounds one relayed delivery. */
  relay: { host: string; port: number; timeoutMs: number };
  /** Which store user a recipient is: its local part (Dovecot's %n) or the whole address (%u). */
  userName: 'localpart' | 'address';
  /** Bigger messages are refused (552); the extension refuses to decrypt more than 25 MB anyway. */
  maxMessageBytes: number;
  maxRecipients: number;
  maxConnections: number;
  /** An idle connection from the MTA is closed after this long. */
  timeoutMs: number;
  /** Ask Dovecot over IMAP before relaying a retry again (stored-check.ts); none: relay it. */
  storedCheck?: StoredCheckConfig;
  /**
   * Keep each message in the store for the demo webmail (until
   * limits.messageBodyRetentionMs). Off: Dovecot holds the mail, and the
   * store keeps only ids and sizes.
   */
  keepBodies: boolean;
}

export const LMTP_DEFAULTS: LmtpConfig = {
  host: '127.0.0.1',
  port: 2424,
  relay: { host: '127.0.0.1', port: 24, timeoutMs: 60_000 },
  userName: 'localpart',
  maxMessageBytes: 26 * 1024 * 1024,
  maxRecipients: 50,
  maxConnections: 20,
  timeoutMs: 60_000,
  keepBodies: false,
};

/** The store user a mail address (or login) is, as Dovecot's username_format: %n (the local part) or %u (the whole address). */
export function storeUserOf(address: string, userName: LmtpConfig['userName']): string {
  return userName === 'address' ? address.toLowerCase() : address.replace(/@[^@]*$/, '');
}

function int(value: unknown, name: string, min: number, max: number): number {
  const n = typeof value === 'string' ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max)
    throw new Error(`config: lmtp.${name} must be an integer in ${min}..${max}`);
  return n;
}

/** host:port, e.g. 127.0.0.1:24 */
function hostPort(s: string): { host: string; port: number } {
  const m = s.match(/^\[?([^\]]+?)\]?:(\d+)$/);
  if (!m) throw new Error(`config: PMF_LMTP_RELAY "${s}" must be host:port`);
  return { host: m[1], port: Number(m[2]) };
}

export function lmtpConfig(fromFile: unknown, env: NodeJS.ProcessEnv): LmtpConfig {
  const f = (fromFile ?? {}) as Partial<LmtpConfig>;
  const c: LmtpConfig = { ...LMTP_DEFAULTS, ...f, relay: { ...LMTP_DEFAULTS.relay, ...f.relay } };
  if (env.PMF_LMTP_PORT) c.port = Number(env.PMF_LMTP_PORT);
  if (env.PMF_LMTP_RELAY) c.relay = { ...c.relay, ...hostPort(env.PMF_LMTP_RELAY) };
  if (typeof c.host !== 'string' || !isLoopback(c.host))
    throw new Error('config: lmtp.host must be a loopback address (LMTP has no authentication)');
  if (typeof c.relay.host !== 'string' || c.relay.host === '') throw new Error('config: lmtp.relay.host is missing');
  if (c.userName !== 'localpart' && c.userName !== 'address')
    throw new Error('config: lmtp.userName must be "localpart" or "address"');
  c.port = int(c.port, 'port', 0, 65535);
  c.relay.port = int(c.relay.port, 'relay.port', 1, 65535);
  c.relay.timeoutMs = int(c.relay.timeoutMs, 'relay.timeoutMs', 1_000, 600_000);
  c.maxMessageBytes = int(c.maxMessageBytes, 'maxMessageBytes', 1024, 256 * 1024 * 1024);
  c.maxRecipients = int(c.maxRecipients, 'maxRecipients', 1, 1000);
  c.maxConnections = int(c.maxConnections, 'maxConnections', 1, 10_000);
  c.timeoutMs = int(c.timeoutMs, 'timeoutMs', 1_000, 600_000);
  if (typeof c.keepBodies !== 'boolean') throw new Error('config: lmtp.keepBodies must be true or false');
  if (c.storedCheck !== undefined) {
    const k: StoredCheckConfig = { ...{ host: '127.0.0.1', port: 143, timeoutMs: 10_000 }, ...c.storedCheck };
    if (typeof k.host !== 'string' || !isLoopback(k.host))
      throw new Error(
        'config: lmtp.storedCheck.host must be a loopback address (plain IMAP carries the master password)',
      );
    if (typeof k.masterUser !== 'string' || !/^[A-Za-z0-9._-]{1,64}$/.test(k.masterUser))
      throw new Error('config: lmtp.storedCheck.masterUser must be a Dovecot master user name');
    if (typeof k.passwordFile !== 'string' || !path.isAbsolute(k.passwordFile))
      throw new Error('config: lmtp.storedCheck.passwordFile must be an absolute path');
    k.port = int(k.port, 'storedCheck.port', 1, 65535);
    k.timeoutMs = int(k.timeoutMs, 'storedCheck.timeoutMs', 1_000, 600_000);
    c.storedCheck = k;
  }
  return c;
}
