// Accounts: users by name, each with a random key salt that its user keys
// are derived from (docs/security.md#deleted-accounts), and the health
// check's round trip.
import { randomBytes } from 'node:crypto';
import { first, type SqlDriver } from './store-driver.js';
import { WINDOW_TABLES } from './store-rates.js';
import type { TokenPolicy, Tokens } from './tokens.js';

/** Bytes of an account's key salt. */
export const KEY_SALT_BYTES = 32;

/**
 * A fresh account key salt from the CSPRNG: user keys are derived from it,
 * never from the numeric id, so no account ever derives another's key, past
 * or present (docs/security.md#deleted-accounts).
 */
export const newKeySalt = (): Buffer => randomBytes(KEY_SALT_BYTES);

const NAME = /^[A-Za-z0-9._@+-]{1,128}$/;

export class Accounts {
  constructor(
    private readonly db: SqlDriver,
    private readonly tokens: Tokens,
    private readonly defaultPolicy: TokenPolicy,
  ) {}

  /**
   * The health check's round trip: writes this instance's row, durably, and
   * reads it back. Fails when the store cannot take a write (a full disk, a
   * failed WAL sync, a PostgreSQL that is down or read-only).
   */
  async probe(instance: string): Promise<void> {
    const at = Date.now();
    await this.db.run(
      'INSERT INTO health_probes (instance, probed_at) VALUES (?, ?) ON CONFLICT (instance) DO UPDATE SET probed_at = excluded.probed_at',
      [instance, at],
    );
    const row = await first<{ probed_at: number }>(this.db, 'SELECT probed_at FROM health_probes WHERE instance = ?', [
      instance,
    ]);
    if (row?.probed_at !== at) throw new Error('the store did not read back what was just written');
  }

  /** Creates a user and returns a fresh bearer token (shown once, stored hashed). */
  async addUser(name: string, policy = this.defaultPolicy): Promise<{ userId: number; token: string }> {
    if (!NAME.test(name)) throw new Error('user name must match [A-Za-z0-9._@+-]{1,128}');
    let row: { id: number } | undefined;
    try {
      row = await first<{ id: number }>(
        this.db,
        'INSERT INTO users (name, created_at, key_salt) VALUES (?, ?, ?) RETURNING id',
        [name, Date.now(), newKeySalt()],
      );
    } catch (e) {
      if (this.db.violated(e) === 'unique') throw new Error(`user ${name} already exists`);
      throw e;
    }
    const userId = Number(row!.id);
    return { userId, token: await this.tokens.issue(userId, 'cli', policy) };
  }

  /** The user's id, creating the user (without a token) when there is none by that name: a first sign-in. */
  async ensureUser(name: string): Promise<number> {
    if (!NAME.test(name)) throw new Error('user name must match [A-Za-z0-9._@+-]{1,128}');
    await this.db.run('INSERT INTO users (name, created_at, key_salt) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING', [
      name,
      Date.now(),
      newKeySalt(),
    ]);
    return (await this.userId(name))!;
  }

  async userId(name: string): Promise<number | undefined> {
    const row = await first<{ id: number }>(this.db, 'SELECT id FROM users WHERE name = ?', [name]);
    return row?.id;
  }

  /**
   * Deletes an account: its tokens, delivered messages, claims, recorded
   * answers, topics and settings, and its rate windows. Its key epochs stay
   * (they belong to its key salt, which no other account gets): an account
   * restored from a backup goes on from its epoch, and no new account starts
   * a fresh budget on a key that leaked. Returns the deleted id, or undefined
   * when there is no such user.
   */
  async deleteUser(name: string): Promise<number | undefined> {
    const row = await first<{ id: number }>(this.db, 'DELETE FROM users WHERE name = ? RETURNING id', [name]);
    if (!row) return undefined;
    const id = Number(row.id);
    // Ids are never handed out again; this only frees the rows.
    for (const table of WINDOW_TABLES) await this.db.run(`DELETE FROM ${table} WHERE user_id = ?`, [id]);
    return id;
  }
}
