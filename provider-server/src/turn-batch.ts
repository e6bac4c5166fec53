// Writes that many sessions make in the same turn of the event loop, made
// as one statement (store-ledger.ts: recorded answers and acknowledgements
// on PostgreSQL, where every statement is a round trip, a transaction and
// the driver's work on the event loop, however little it changes).

/** At most this many items per statement: a turn's writes are bounded by the sessions anyway. */
const MAX_BATCH = 500;

export class TurnBatch<T, R = void> {
  private items: { item: T; resolve(result: R): void; reject(e: unknown): void }[] = [];

  /** `write`: makes the items' writes, all or none (one statement); resolves to each item's result, in order. */
  constructor(private readonly write: (items: T[]) => Promise<R[]>) {}

  /** Resolves to the item's result once its batch is written; rejects with the batch's error. */
  add(item: T): Promise<R> {
    return new Promise((resolve, reject) => {
      if (this.items.push({ item, resolve, reject }) === 1) setImmediate(() => this.flush());
    });
  }

  private flush(): void {
    const all = this.items;
    this.items = [];
    for (let i = 0; i < all.length; i += MAX_BATCH) {
      const batch = all.slice(i, i + MAX_BATCH);
      this.write(batch.map((b) => b.item)).then(
        (results) => batch.forEach((b, k) => b.resolve(results[k])),
        (e: unknown) => batch.forEach((b) => b.reject(e)),
      );
    }
  }
}
