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
import type { Steps } from './store-driver.js';
import { claimSpendArgs } from './store-ledger.js';
import type { DailyKind, MessageCharge } from './store-rates.js';
import { windowEnd, type ClaimResult, type KeySpend, type Store, type Task } from './store.js';

export type RateLimits = Pick<ServerLimits, 'requestsPerMinute' | 'messagesPerDay' | 'backlogAllowance'>;

/** A user and key salt of a session after hello. */
export interface RatedUser {
  userId: number;
  salt: Uint8Array;
}

function rateLimited(limits: RateLimits): ProtocolError {
  return new ProtocolError(
    'rate_limited',
    `at most ${limits.requestsPerMinute} messages and OT frames per minute (spam, topics and link checks of one message count once)`,
  );
}

/** One unit of the per-minute rate, or `rate_limited`. */
export async function takeUnit(store: Store, limits: RateLimits, userId: number): Promise<void> {
  if (!(await store.takeRate(userId, limits.requestsPerMinute))) throw rateLimited(limits);
}

/**
 * `amount` of the day's `perDay` cap of `kind`, else of the key salt's
 * backlog allowance (`allowance` in all); false when both are spent.
 */
export function takeDaily(...charge: Parameters<typeof dailySteps>): Promise<boolean> {
  return charge[0].messageRates.run('daily', dailySteps(...charge));
}

/** takeDaily as steps of a larger operation (chargeSteps). */
function* dailySteps(
  store: Store,
  user: RatedUser,
  kind: DailyKind,
  amount: number,
  perDay: number,
  allowance: number,
): Steps<boolean> {
  return (
    (yield* store.rates.takeRateSteps(user.userId, perDay, Date.now(), kind, amount)) ||
    (yield* store.messageRates.takeAllowance(user.salt, kind, amount, allowance))
  );
}

/** What the charge of a request frame naming a message came to. */
type Charged = 'ok' | Refused;
type Refused = 'rate_limited' | 'daily_limit';

/**
 * Charges a request frame naming `messageId` (above); throws `rate_limited` or `daily_limit`.
 * On PostgreSQL the same steps run in one call (MessageRates.charge).
 */
export async function takeMessageRate(
  store: Store,
  limits: RateLimits,
  user: RatedUser,
  messageId: string,
): Promise<void> {
  const charged =
    store.sql().dialect === 'postgres'
      ? await store.messageRates.charge(messageCharge(limits, user, messageId))
      : await store.messageRates.run('message_rate', chargeSteps(store, limits, user, messageId));
  if (charged !== 'ok') throw refusal(limits, charged);
}

/** What a request frame naming `messageId` is charged against, for the store's PostgreSQL functions. */
function messageCharge(limits: RateLimits, user: RatedUser, messageId: string): MessageCharge {
  return {
    ...user,
    messageId,
    freeFrames: FRAMES_PER_MESSAGE,
    perMinute: limits.requestsPerMinute,
    perDay: limits.messagesPerDay,
    allowance: limits.backlogAllowance,
  };
}

/** A claim a request frame pays for: its message, task, request digest and key spend (Ledger.claimAndSpend). */
export interface PaidClaim {
  messageId: string;
  task: Task;
  request: Uint8Array;
  spend: KeySpend;
}

/**
 * Charges a request frame (takeMessageRate) and, once charged, claims its
 * message and spends its decryptions (Ledger.claimAndSpend). On SQLite one
 * write of a commit batch, one commit round where there were two on every
 * email's path: a refused charge claims nothing, and a claim that fails
 * (throws) backs the charge out with it, as nothing was answered. On
 * PostgreSQL the same in one call and transaction (pmf_charge_claim_v2):
 * one round trip where there were two.
 */
export async function chargeAndClaim(
  store: Store,
  limits: RateLimits,
  user: RatedUser,
  paid: PaidClaim,
): Promise<ClaimResult | 'rotated'> {
  const outcome =
    store.sql().dialect === 'postgres'
      ? await chargeAndClaimCall(store, limits, user, paid)
      : await store.messageRates.run('charge_claim', chargeClaimSteps(store, limits, user, paid));
  if (outcome === 'rate_limited' || outcome === 'daily_limit') throw refusal(limits, outcome);
  return outcome;
}

/** chargeAndClaim on PostgreSQL: one call of pmf_charge_claim_v2. */
async function chargeAndClaimCall(
  store: Store,
  limits: RateLimits,
  user: RatedUser,
  { messageId, task, request, spend }: PaidClaim,
): Promise<Refused | ClaimResult | 'rotated'> {
  const { attempt, args } = claimSpendArgs(task, request, spend);
  const outcome = await store.messageRates.chargeAndClaim(messageCharge(limits, user, messageId), args);
  return outcome === 'claimed' ? { attempt } : outcome;
}

/** chargeAndClaim's statements on SQLite: chargeSteps, then, once charged, the claim's. */
function* chargeClaimSteps(
  store: Store,
  limits: RateLimits,
  user: RatedUser,
  { messageId, task, request, spend }: PaidClaim,
): Steps<Refused | ClaimResult | 'rotated'> {
  const charged = yield* chargeSteps(store, limits, user, messageId);
  if (charged !== 'ok') return charged;
  return yield* store.ledger.claimSpendSteps(user.userId, messageId, task, request, spend);
}

/** The error a refused charge is answered with. */
function refusal(limits: RateLimits, refused: Refused): ProtocolError {
  if (refused === 'rate_limited') return rateLimited(limits);
  return new ProtocolError(
    'daily_limit',
    `at most ${limits.messagesPerDay} new messages per account per day once its backlog allowance is spent; ` +
      `try again after ${new Date(windowEnd('messages')).toISOString()}`,
  );
}

/**
 * takeMessageRate's statements, run as one operation of the store's (on
 * SQLite one write of a commit batch: one commit round, not four).
 */
function* chargeSteps(store: Store, limits: RateLimits, user: RatedUser, messageId: string): Steps<Charged> {
  const seen = yield* store.messageRates.frame(user.userId, messageId);
  if (seen?.counted && seen.frames <= FRAMES_PER_MESSAGE) return 'ok';
  // frame marked a new message counted; a refusal takes that back (uncounted).
  const refused = function* (why: Refused): Steps<Charged> {
    if (seen && !seen.counted) yield* store.messageRates.uncounted(user.userId, messageId);
    return why;
  };
  if (!(yield* store.rates.takeRateSteps(user.userId, limits.requestsPerMinute, Date.now(), 'requests')))
    return yield* refused('rate_limited');
  if (!seen || seen.counted) return 'ok';
  if (!(yield* dailySteps(store, user, 'messages', 1, limits.messagesPerDay, limits.backlogAllowance)))
    return yield* refused('daily_limit');
  return 'ok';
}
