// Bearer secrets of the HTTP endpoints for servers and operators (admin
// tokens, webmail secrets), configured by SHA-256 only and compared in
// constant time. Guessing them: each client
// address gets `perMinute` failed tries in a one-minute window, then 429
// until the window ends, whatever it sends, so a right guess among the
// refused ones tells it nothing. The secrets are 256-bit random, so this
// bounds the cost of the attempts (a constant-time hash and compare each, a
// log line, a metric) rather than the odds. The address is the client's as
// per-address limits see it (behind a trusted proxy, the forwarded one).
import { createHash, timingSafeEqual } from 'node:crypto';
import type http from 'node:http';
import { AddressLimiter } from './address-limiter.js';

/** Whether an Authorization header carries a bearer secret whose SHA-256 is one of hashes (constant time). */
export function authorized(header: string | undefined, hashes: readonly Buffer[]): boolean {
  const m = /^Bearer ([\x21-\x7e]{1,256})$/.exec(header ?? '');
  if (!m) return false;
  const digest = createHash('sha256').update(m[1]).digest();
  let ok = false;
  for (const h of hashes) ok = timingSafeEqual(digest, h) || ok; // every hash compared, whichever matches
  return ok;
}

export type Verdict = 'ok' | 'unauthorized' | 'throttled';

export class SecretGuard {
  private readonly failures: AddressLimiter;

  /** `hashes`: SHA-256 of each accepted secret. */
  constructor(
    private readonly hashes: readonly Buffer[],
    perMinute: number,
    /** The client address a request is counted against. */
    readonly address: (req: http.IncomingMessage) => string,
  ) {
    this.failures = new AddressLimiter(perMinute);
  }

  check(req: http.IncomingMessage, now = Date.now()): Verdict {
    const address = this.address(req);
    if (this.failures.reached(address, now)) return 'throttled';
    if (authorized(req.headers.authorization, this.hashes)) return 'ok';
    this.failures.take(address, now);
    return 'unauthorized';
  }

  /** Seconds until a throttled address may try again (the window's end). */
  static retryAfter(now = Date.now()): number {
    return Math.ceil((60_000 - (now % 60_000)) / 1000);
  }
}
