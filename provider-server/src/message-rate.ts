// The per-user rate counts delivered messages, not frames
// (docs/protocol.md#resource-limits, docs/security.md#the-rate-counts-messages):
//
// - The first request frame naming a delivered message costs one unit of
//   `requestsPerMinute` and one of the user's `messagesPerDay`; past the
//   day's cap, one of the account's `backlogAllowance` (counted per key salt,
//   so a deleted and restored account does not get it again). Nothing left:
//   `daily_limit`, and the message stays unclaimed.
// - The message's next FRAMES_PER_MESSAGE − 1 request frames (its link
//   check, its topics, a resend after a reconnect) cost nothing: a message
//   gets at most one answer per task anyway (the exactly-once ledger).
// - Any frame past those, or naming a message never delivered to the user,
//   costs a unit, as every OT and topic_setting frame does.
//
// So a backlog pays once per message, and a client repeating, varying or
// flooding message ids pays at least what it paid per frame before.
import { FRAMES_PER_MESSAGE } from '../../protocol/limits.js';
import { ProtocolError } from '../../protocol/errors.js';
import type { ServerLimits } from './limits.js';
import { windowEnd, type RateKind, type SqlDriver, type Store } from './store.js';

/** What the store keeps per delivered message and per key salt for the rate. */
export class MessageRates {
  constructor(private readonly db: SqlDriver) {}

  /**
   * Counts one request frame naming `messageId`: how many have named it so
   * far and whether it was counted as a message; undefined when it was never
   * delivered to this user.
   */
  async frame(userId: number, messageId: string): Promise<{ frames: number; counted: boolean } | undefined> {
    const [row] = await this.db.all<{ frames: number; counted: number }>(
      'UPDATE messages SET rate_frames = rate_frames + 1 WHERE user_id = ? AND message_id = ? RETURNING rate_frames AS frames, rate_counted AS counted',
      [userId, messageId],
      'committed', // lost in a crash: the message is counted once more, never less
    );
    return row && { frames: row.frames, counted: row.counted === 1 };
  }

  /** Marks the message counted; its free frames start from this one. */
  async counted(userId: number, messageId: string): Promise<void> {
    await this.db.run(
      'UPDATE messages SET rate_counted = 1, rate_frames = 1 WHERE user_id = ? AND message_id = ? AND rate_counted = 0',
      [userId, messageId],
    );
  }

  /**
   * Takes `amount` from the key salt's lifetime allowance of `kind`, at most
   * `limit` in all; false (nothing taken) when it would pass it. One statement:
   * instances sharing the store never overspend it.
   */
  async takeAllowance(salt: Uint8Array, kind: DailyKind, amount: number, limit: number): Promise<boolean> {
    if (amount > limit) return false;
    const rows = await this.db.all(
      'INSERT INTO backlog_allowance (key_salt, kind, used) VALUES (?, ?, ?) ON CONFLICT (key_salt, kind) DO UPDATE SET used = backlog_allowance.used + ? WHERE backlog_allowance.used + ? <= ? RETURNING used',
      [Buffer.from(salt), kind, amount, amount, amount, limit],
    );
    return rows.length === 1;
  }
}

/** The daily caps the backlog allowance extends. */
export type DailyKind = Extract<RateKind, 'messages' | 'oprf'>;

export type RateLimits = Pick<ServerLimits, 'requestsPerMinute' | 'messagesPerDay' | 'backlogAllowance'>;

/** A user and key salt of a session after hello. */
export interface RatedUser {
  userId: number;
  salt: Uint8Array;
}

/** One unit of the per-minute rate, or `rate_limited`. */
export async function takeUnit(store: Store, limits: RateLimits, userId: number): Promise<void> {
  if (!(await store.takeRate(userId, limits.requestsPerMinute))) {
    throw new ProtocolError(
      'rate_limited',
      `at most ${limits.requestsPerMinute} messages and OT frames per minute (spam, topics and link checks of one message count once)`,
    );
  }
}

/**
 * `amount` of the day's `perDay` cap of `kind`, else of the key salt's
 * backlog allowance (`allowance` in all); false when both are spent.
 */
export async function takeDaily(
  store: Store,
  user: RatedUser,
  kind: DailyKind,
  amount: number,
  perDay: number,
  allowance: number,
): Promise<boolean> {
  return (
    (await store.takeRate(user.userId, perDay, Date.now(), kind, amount)) ||
    store.messageRates.takeAllowance(user.salt, kind, amount, allowance)
  );
}

/** Charges a request frame naming `messageId` (above); throws `rate_limited` or `daily_limit`. */
export async function takeMessageRate(
  store: Store,
  limits: RateLimits,
  user: RatedUser,
  messageId: string,
): Promise<void> {
  const seen = await store.messageRates.frame(user.userId, messageId);
  if (seen?.counted && seen.frames <= FRAMES_PER_MESSAGE) return;
  await takeUnit(store, limits, user.userId);
  if (!seen || seen.counted) return;
  if (!(await takeDaily(store, user, 'messages', 1, limits.messagesPerDay, limits.backlogAllowance))) {
    throw new ProtocolError(
      'daily_limit',
      `at most ${limits.messagesPerDay} new messages per account per day once its backlog allowance is spent; ` +
        `try again after ${new Date(windowEnd('messages')).toISOString()}`,
    );
  }
  await store.messageRates.counted(user.userId, messageId);
}
