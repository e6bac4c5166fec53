// An event page (Firefox, Thunderbird) or service worker (Chromium) is
// stopped after a spell without events (30 s for users), even while work it
// does is still running: a pending answer postpones that only once. Every
// call of an extension API starts the spell again, so while work that
// someone waits for runs (a request, a large message being decrypted, a
// worker's run paced by the provider's rate), the background calls a cheap
// one every few seconds. Bounded: a piece of work keeps it awake for at most
// AT_MOST_MS since it started or last showed progress, so work that hangs
// cannot keep it up for good. `touch` is that call
// (browser.runtime.getPlatformInfo in the background); no browser API here,
// so it is unit-tested in Node.

export const EVERY_MS = 2_000;
export const AT_MOST_MS = 10 * 60_000;

/** One piece of work keeping the background awake. */
export interface Hold {
  /** The work showed progress: its AT_MOST_MS start again. */
  renew(): void;
  /** The work is over. */
  release(): void;
}

/** One timer for all work held: touches every EVERY_MS while some work within its bound runs. */
export class KeepAwake {
  private readonly held = new Set<{ since: number }>();
  private timer: ReturnType<typeof setInterval> | undefined;

  constructor(private readonly touch: () => Promise<unknown>) {}

  hold(): Hold {
    const work = { since: 0 };
    let released = false;
    const start = () => {
      work.since = Date.now();
      this.held.add(work); // again, if it had outlasted its bound
      this.startTimer();
    };
    start();
    return {
      renew: () => {
        if (!released) start();
      },
      release: () => {
        released = true;
        this.held.delete(work);
        this.stopWhenIdle();
      },
    };
  }

  /** `work`'s outcome, the background kept awake until it settles (at most AT_MOST_MS). */
  async during<T>(work: Promise<T>): Promise<T> {
    const hold = this.hold();
    try {
      return await work;
    } finally {
      hold.release();
    }
  }

  private startTimer(): void {
    if (this.timer !== undefined) return;
    // Only the current timer ticks: Node's mock timers (the unit test) go on firing an interval
    // cleared from its own callback.
    const timer = setInterval(() => this.timer === timer && this.tick(), EVERY_MS);
    this.timer = timer;
  }

  private tick(): void {
    for (const work of this.held) if (Date.now() - work.since >= AT_MOST_MS) this.held.delete(work);
    if (this.held.size > 0) this.touch().catch(() => {});
    this.stopWhenIdle();
  }

  private stopWhenIdle(): void {
    if (this.held.size > 0 || this.timer === undefined) return;
    clearInterval(this.timer);
    this.timer = undefined;
  }
}
