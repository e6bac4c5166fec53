// Events per client address per minute, in memory, per instance: the wrong
// secrets an address sent (secret-guard.ts). Connections are counted across
// instances instead (connection-gate.ts). Fixed one-minute windows; the whole
// map is dropped when the window turns, so it holds at most one window of addresses.
export class AddressLimiter {
  private window = 0;
  private readonly counts = new Map<string, number>();

  constructor(private readonly perMinute: number) {}

  /** Counts one connection from `address`; false when it is over the limit. */
  take(address: string, now = Date.now()): boolean {
    const n = this.count(address, now) + 1;
    this.counts.set(address, n);
    return n <= this.perMinute;
  }

  /** Whether `address` has reached the limit in this window (counting nothing). */
  reached(address: string, now = Date.now()): boolean {
    return this.count(address, now) >= this.perMinute;
  }

  private count(address: string, now: number): number {
    const window = Math.floor(now / 60_000);
    if (window !== this.window) {
      this.window = window;
      this.counts.clear();
    }
    return this.counts.get(address) ?? 0;
  }
}
