// Group sync for the stores' durable writes (store-sqlite.ts, store-postgres.ts):
// a writer whose commit must be on disk waits for a round of `sync` that
// started after its commit. One round runs at a time, and everyone who asks
// while it runs shares the next, so one disk sync serves many writes.
export class SyncRounds {
  /** Rounds started so far; a waiter needs the round numbered one past what had started when it asked. */
  private started = 0;
  private waiting: { round: number; resolve(): void; reject(e: unknown): void }[] = [];
  private running: Promise<void> | undefined;

  /** `sync`: makes every commit made before it started durable; a failure fails that round's waiters. */
  constructor(private readonly sync: () => Promise<void>) {}

  /** Resolves once a round that started after this call has ended. */
  wait(): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ round: this.started + 1, resolve, reject });
      this.running ??= this.run();
    });
  }

  /** Resolves when no round is running. */
  async idle(): Promise<void> {
    await this.running;
  }

  private async run(): Promise<void> {
    while (this.waiting.length > 0) {
      const round = ++this.started;
      let failed: { error: unknown } | undefined;
      try {
        await this.sync();
      } catch (error) {
        failed = { error };
      }
      const done = this.waiting.filter((w) => w.round <= round);
      this.waiting = this.waiting.filter((w) => w.round > round);
      for (const w of done)
        if (failed) w.reject(failed.error);
        else w.resolve();
    }
    this.running = undefined;
  }
}
