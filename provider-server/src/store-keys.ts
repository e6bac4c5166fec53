// Key budgets (docs/security.md): each key salt's current key epoch per
// model version and how many decryptions it has served; an epoch that is
// used up rotates to the next.
import { BOOKKEEPING, changes, first, rows, runSteps, type SqlDriver, type Steps } from './store-driver.js';

/** A user's key epoch for one model version and how many decryptions it has served. */
export interface UserKeyState {
  /** The account's key salt: with the epoch, what its user key is derived from (UserKeyId). */
  salt: Buffer;
  epoch: number;
  used: number;
}

/** `count` decryptions under the key of (`salt`, `epoch`) of a model version, within `budget` (KeyEpochs.spendUserKey). */
export interface KeySpend {
  salt: Uint8Array;
  modelId: string;
  version: number;
  epoch: number;
  budget: number;
  count: number;
}

export class KeyEpochs {
  constructor(private readonly db: SqlDriver) {}

  /**
   * The user's key salt and current key epoch for a model version (epoch 1
   * when its salt first serves it); undefined when the account is gone.
   */
  async userKey(userId: number, modelId: string, version: number): Promise<UserKeyState | undefined> {
    await this.db.run(
      'INSERT INTO key_epochs (key_salt, model_id, model_version, epoch, used) SELECT key_salt, ?, ?, 1, 0 FROM users WHERE id = ? ON CONFLICT DO NOTHING',
      [modelId, version, userId],
      BOOKKEEPING, // a lost first epoch is made again alike; its key is derived from (salt, epoch)
    );
    const row = await first<UserKeyState>(
      this.db,
      'SELECT u.key_salt AS salt, k.epoch, k.used FROM users u JOIN key_epochs k ON k.key_salt = u.key_salt WHERE u.id = ? AND k.model_id = ? AND k.model_version = ?',
      [userId, modelId, version],
    );
    return row && { ...row, salt: Buffer.from(row.salt) };
  }

  /** The current epoch of a key salt for a model version, made (epoch 1) on first use. */
  private *keyEpoch(salt: Uint8Array, modelId: string, version: number): Steps<number> {
    const key = [Buffer.from(salt), modelId, version];
    yield* changes(
      'INSERT INTO key_epochs (key_salt, model_id, model_version, epoch, used) VALUES (?, ?, ?, 1, 0) ON CONFLICT DO NOTHING',
      key,
    );
    const [row] = yield* rows<{ epoch: number }>(
      'SELECT epoch FROM key_epochs WHERE key_salt = ? AND model_id = ? AND model_version = ?',
      key,
    );
    return row.epoch;
  }

  /**
   * Counts `count` decryptions (1 per spam request, B' per topic request)
   * under the key of (`salt`, `epoch`), atomically across sessions and
   * instances: 'rotated' when that epoch is no longer current (the client
   * must fetch the next key); the request that leaves less than `count`
   * still runs, and moves the salt to the next epoch. A request that would
   * overrun the budget rotates the key first, so no epoch serves more than
   * `budget` decryptions.
   */
  async spendUserKey(
    salt: Uint8Array,
    modelId: string,
    version: number,
    epoch: number,
    budget: number,
    count = 1,
  ): Promise<'ok' | 'rotated'> {
    return runSteps(this.db, 'key_spend', this.spend({ salt, modelId, version, epoch, budget, count }), BOOKKEEPING);
  }

  /** spendUserKey as steps of a larger operation (Ledger.claimAndSpend). */
  *spend({ salt, modelId, version, epoch, budget, count }: KeySpend): Steps<'ok' | 'rotated'> {
    checkSpend(count, budget);
    const key = [Buffer.from(salt), modelId, version, epoch];
    const where = 'WHERE key_salt = ? AND model_id = ? AND model_version = ? AND epoch = ?';
    // Each UPDATE is conditional on the epoch it read, so concurrent spenders
    // (other sessions, other instances) never both use the last decryptions.
    // The common case is one statement: the spend. The salt's row exists once
    // a hello made the key; if not, both UPDATEs miss and keyEpoch below makes it.
    for (;;) {
      // Rotate as soon as the rest cannot serve another request of this size: a
      // client counting its budget (welcome.keyBudget) then reconnects before
      // sending, instead of having ciphertexts refused after they left.
      const spent = yield* changes(
        `UPDATE key_epochs SET
           epoch = CASE WHEN ? - (used + ?) < ? THEN epoch + 1 ELSE epoch END,
           used = CASE WHEN ? - (used + ?) < ? THEN 0 ELSE used + ? END
         ${where} AND used + ? <= ?`,
        [budget, count, count, budget, count, count, count, ...key, count, budget],
      );
      if (spent === 1) return 'ok';
      const overran = yield* changes(`UPDATE key_epochs SET epoch = epoch + 1, used = 0 ${where} AND used + ? > ?`, [
        ...key,
        count,
        budget,
      ]);
      if (overran === 1) return 'rotated';
      if ((yield* this.keyEpoch(salt, modelId, version)) !== epoch) return 'rotated';
    }
  }
}

/** A request's decryptions never exceed a whole key budget (KeyEpochs.spendUserKey). */
export function checkSpend(count: number, budget: number): void {
  if (count > budget) throw new Error(`one request needs ${count} decryptions, above the key budget ${budget}`);
}
