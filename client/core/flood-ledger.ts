// The device's lifetime flooding budget (docs/security.md#flooding-over-a-lifetime).
// Each ciphertext that leaves hides the email's noise from the provider up to
// a statistical distance (ClientModel.floodDistance, at most 2^-51 each), and
// the distances add up over every ciphertext the provider ever sees from this
// device, whatever user key, epoch, model version or account it was for: key
// rotation is the provider's to do or not. The ledger keeps that sum on the
// device, in units of 2^-128 so it stays exact, and refuses the ciphertext
// that would take it past 2^-40.

/** 2^-40 in units of 2^-128. */
export const FLOOD_LIFETIME = 1n << 88n;

/** Where the sum is kept (a file for the CLI, IndexedDB for the extension). */
export interface FloodLedgerStore {
  load(): Promise<bigint | undefined>;
  save(spent: bigint): Promise<void>;
  /**
   * Adds `units` in one atomic step, unless the sum would pass `limit`
   * (false, nothing added). A store several realms write at once (the
   * extension's workers) must have it: load-then-save there loses charges.
   */
  add?(units: bigint, limit: bigint): Promise<boolean>;
}

export class FloodBudgetExhausted extends Error {
  constructor() {
    super(
      'This device has used up what it may send for private classification over its lifetime ' +
        '(the flooding budget, docs/security.md#flooding-over-a-lifetime); nothing was sent.',
    );
    this.name = 'FloodBudgetExhausted';
  }
}

export class FloodLedger {
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: FloodLedgerStore,
    readonly limit = FLOOD_LIFETIME,
  ) {}

  /**
   * Adds `units` before the ciphertexts they stand for leave the device (a
   * ciphertext counted and then not sent only wastes budget); throws
   * FloodBudgetExhausted, adding nothing, when the sum would pass the limit.
   * Charges are applied one at a time.
   */
  charge(units: bigint): Promise<void> {
    if (units < 0n) throw new RangeError('flood ledger: a charge cannot be negative');
    const run = this.chain.then(async () => {
      if (this.store.add) {
        if (!(await this.store.add(units, this.limit))) throw new FloodBudgetExhausted();
        return;
      }
      const spent = (await this.store.load()) ?? 0n;
      if (spent + units > this.limit) throw new FloodBudgetExhausted();
      await this.store.save(spent + units);
    });
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** The sum so far, in units of 2^-128. */
  async spent(): Promise<bigint> {
    await this.chain;
    return (await this.store.load()) ?? 0n;
  }
}

/** A store in memory (tests; a client that keeps nothing on the device). */
export function memoryFloodStore(initial = 0n): FloodLedgerStore {
  let spent = initial;
  return {
    load: async () => spent,
    save: async (v) => void (spent = v),
  };
}
