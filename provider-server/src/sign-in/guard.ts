// Password guessing at POST /signin, bounded per account and per client
// address. Each key (an account, an address) has `free` guesses checked; the
// last of them and every one after locks it for `baseLockMs`, doubling up to `maxLockMs`.
// A success clears the account's count (not the address's: one right
// password must not reset a spraying address). A day without failures
// forgets a key.
//
// An attempt counts as a failure from the moment it starts, until Dovecot
// says the password was right: a client firing many guesses at once gets no
// more of them checked than one firing them in turn.
//
// Per instance, in memory: behind a load balancer each instance allows its
// own `free` guesses (the factor is the number of instances), and Dovecot's
// own per-address penalty, which the provider passes the client address to,
// is shared by all. The maps are bounded; when full, the key idle longest goes.

export interface GuardPolicy {
  free: number;
  baseLockMs: number;
  maxLockMs: number;
  forgetMs: number;
  maxKeys: number;
}

export const ACCOUNT_POLICY: GuardPolicy = {
  free: 5,
  baseLockMs: 60_000,
  maxLockMs: 3_600_000,
  forgetMs: 86_400_000,
  maxKeys: 100_000,
};

/** An address may try more accounts (a family, an office behind one NAT) before it is locked. */
export const ADDRESS_POLICY: GuardPolicy = { ...ACCOUNT_POLICY, free: 20 };

interface Entry {
  failures: number;
  lastFailure: number;
  lockedUntil: number;
}

class Counter {
  private readonly entries = new Map<string, Entry>();
  constructor(private readonly policy: GuardPolicy) {}

  private entry(key: string, now: number): Entry | undefined {
    const e = this.entries.get(key);
    if (e && now - e.lastFailure > this.policy.forgetMs && now >= e.lockedUntil) {
      this.entries.delete(key);
      return undefined;
    }
    return e;
  }

  /** When the key may try again (ms since the epoch), or 0 when it may now. */
  lockedUntil(key: string, now: number): number {
    const until = this.entry(key, now)?.lockedUntil ?? 0;
    return until > now ? until : 0;
  }

  fail(key: string, now: number): void {
    const e = this.entry(key, now) ?? { failures: 0, lastFailure: now, lockedUntil: 0 };
    e.failures++;
    e.lastFailure = now;
    const past = e.failures - this.policy.free + 1; // the attempt that uses up the last free one locks
    if (past > 0)
      e.lockedUntil = now + Math.min(this.policy.maxLockMs, this.policy.baseLockMs * 2 ** Math.min(past - 1, 30));
    this.entries.delete(key); // re-inserted last: the Map's order is idle-longest first
    if (this.entries.size >= this.policy.maxKeys) this.entries.delete(this.entries.keys().next().value!);
    this.entries.set(key, e);
  }

  /** Takes back one failure counted ahead (the attempt succeeded or got no verdict). */
  unfail(key: string): void {
    const e = this.entries.get(key);
    if (e) e.failures = Math.max(0, e.failures - 1);
  }

  clear(key: string): void {
    this.entries.delete(key);
  }
}

export type Attempt = {
  /** The password was right: the account starts afresh. */
  succeeded(): void;
  /** The password was wrong: the failure counted ahead stays. */
  failed(): void;
  /** No verdict (the mail server did not answer): the attempt does not count. */
  abandoned(): void;
};

export class SignInGuard {
  private readonly accounts: Counter;
  private readonly addresses: Counter;

  constructor(accountPolicy = ACCOUNT_POLICY, addressPolicy = ADDRESS_POLICY) {
    this.accounts = new Counter(accountPolicy);
    this.addresses = new Counter(addressPolicy);
  }

  /** An attempt for `account` from `address`, or when the later of their locks ends. */
  begin(account: string, address: string, now = Date.now()): Attempt | { retryAt: number } {
    const retryAt = Math.max(this.accounts.lockedUntil(account, now), this.addresses.lockedUntil(address, now));
    if (retryAt) return { retryAt };
    this.accounts.fail(account, now);
    this.addresses.fail(address, now);
    let settled = false;
    const once = (f: () => void) => () => {
      if (!settled) f();
      settled = true;
    };
    return {
      succeeded: once(() => {
        this.accounts.clear(account);
        this.addresses.unfail(address);
      }),
      failed: once(() => {}),
      abandoned: once(() => {
        this.accounts.unfail(account);
        this.addresses.unfail(address);
      }),
    };
  }
}
