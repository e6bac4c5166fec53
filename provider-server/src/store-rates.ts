// The store's rate bookkeeping (docs/protocol.md#resource-limits): per-user
// counts in fixed windows, and what the per-message rate keeps per delivered
// message and per key salt (message-rate.ts decides what each frame costs).
import { BOOKKEEPING, changes, rows, runSteps, type SqlDriver, type Statement, type Steps } from './store-driver.js';
import type { PostgresClaimOutcome } from './store-ledger.js';

/**
 * Per-user counts in fixed windows, each kind apart: requests (spam, topics,
 * link checks, OT) and hellos per minute, blocklist OPRF evaluations and new
 * messages per UTC day (docs/blocklist.md#daily-cap, message-rate.ts).
 */
const WINDOWS = {
  requests: { table: 'rate_windows', ms: 60_000 },
  hello: { table: 'hello_windows', ms: 60_000 },
  oprf: { table: 'oprf_windows', ms: 86_400_000 },
  messages: { table: 'message_windows', ms: 86_400_000 },
  index: { table: 'ri_windows', ms: 60_000 }, // remote index requests (remote-index/http.ts)
} as const;

export type RateKind = keyof typeof WINDOWS;

/** The tables of every window kind: a deleted account's rows go from each. */
export const WINDOW_TABLES: readonly string[] = Object.values(WINDOWS).map((w) => w.table);

/** The daily caps the backlog allowance extends. */
export type DailyKind = Extract<RateKind, 'messages' | 'oprf'>;

/** When the window of `kind` that holds `now` starts (ms). */
function windowStart(kind: RateKind, now: number): number {
  const { ms } = WINDOWS[kind];
  return Math.floor(now / ms) * ms;
}

/** When the window of `kind` that holds `now` ends (ms): a refused client may ask again then. */
export function windowEnd(kind: RateKind, now = Date.now()): number {
  return windowStart(kind, now) + WINDOWS[kind].ms;
}

/** Per-user counts in fixed windows of each kind, shared by every instance on the store. */
export class RateWindows {
  /**
   * Per kind, the window (takeRate) whose users' past windows this process
   * has dropped, and those users: each user's are dropped once a window,
   * not at every request. Only the current window's users are kept.
   */
  private readonly pruned = new Map<RateKind, { window: number; users: Set<number> }>();

  constructor(private readonly db: SqlDriver) {}

  /**
   * Counts `amount` (one request, or a request's OPRF evaluations) against
   * the user's current fixed window of `kind`; false when it would pass
   * `limit` (the request must then be refused, and nothing is counted). One
   * statement, so instances sharing the store count together; the first of
   * a window also drops the user's past windows.
   */
  async takeRate(
    userId: number,
    limit: number,
    now = Date.now(),
    kind: RateKind = 'requests',
    amount = 1,
  ): Promise<boolean> {
    if (amount > limit) return false;
    const count = countStatement(userId, limit, now, kind, amount);
    // Both at once (one commit in SQLite): dropping past windows never touches the current one.
    const [, counted] = await Promise.all([
      this.prunePast(userId, kind, now),
      this.db.all(count.sql, count.params, BOOKKEEPING),
    ]);
    return counted.length === 1;
  }

  /** takeRate as steps of a larger operation (message-rate.ts). */
  *takeRateSteps(userId: number, limit: number, now: number, kind: RateKind, amount = 1): Steps<boolean> {
    if (amount > limit) return false;
    const prune = this.pastWindows(userId, kind, now);
    if (prune) yield prune;
    const count = countStatement(userId, limit, now, kind, amount);
    return (yield* rows(count.sql, count.params)).length === 1;
  }

  /** Drops the user's windows of `kind` before the one holding `now`, the first time this process counts the user in it. */
  prunePast(userId: number, kind: RateKind, now: number): Promise<unknown> | undefined {
    const prune = this.pastWindows(userId, kind, now);
    return prune && this.db.run(prune.sql, prune.params, BOOKKEEPING);
  }

  /** The statement prunePast runs, when it is due (and from then on not again in this window). */
  private pastWindows(userId: number, kind: RateKind, now: number): Statement | undefined {
    const window = windowStart(kind, now);
    let pruned = this.pruned.get(kind);
    if (pruned?.window !== window) this.pruned.set(kind, (pruned = { window, users: new Set() }));
    if (pruned.users.has(userId)) return undefined;
    pruned.users.add(userId);
    const { table } = WINDOWS[kind];
    return {
      sql: `DELETE FROM ${table} WHERE user_id = ? AND window_start < ?`,
      params: [userId, window],
      rows: false,
    };
  }
}

/** Counts `amount` in the user's current window of `kind` unless that passes `limit`; a row returned when counted. */
function countStatement(userId: number, limit: number, now: number, kind: RateKind, amount: number): Statement {
  const { table } = WINDOWS[kind];
  return {
    sql: `INSERT INTO ${table} (user_id, window_start, count) VALUES (?, ?, ?) ON CONFLICT (user_id, window_start) DO UPDATE SET count = ${table}.count + ? WHERE ${table}.count + ? <= ? RETURNING count`,
    params: [userId, windowStart(kind, now), amount, amount, amount, limit],
    rows: true,
  };
}

/** The limits one request frame naming a message is charged against (message-rate.ts). */
export interface MessageCharge {
  userId: number;
  salt: Uint8Array;
  messageId: string;
  /** Frames of a counted message that cost nothing (FRAMES_PER_MESSAGE). */
  freeFrames: number;
  perMinute: number;
  perDay: number;
  allowance: number;
}

/** What the store keeps per delivered message and per key salt for the rate. */
export class MessageRates {
  constructor(
    private readonly db: SqlDriver,
    private readonly windows: RateWindows,
  ) {}

  /**
   * The whole charge of a frame in one call of pmf_message_rate_v2
   * (store-postgres-functions.ts), PostgreSQL only: the steps message-rate.ts
   * runs as one write on SQLite, past windows dropped beside it.
   */
  charge(c: MessageCharge, now = Date.now()): Promise<'ok' | 'rate_limited' | 'daily_limit'> {
    return this.call('pmf_message_rate_v2', c, [], now);
  }

  /**
   * charge and, once charged, a claim with its key spend (`claim`:
   * Ledger's claimSpendArgs) in one call of pmf_charge_claim_v2, PostgreSQL
   * only: a refusal of the charge, or the claim's outcome.
   */
  chargeAndClaim(
    c: MessageCharge,
    claim: (string | number | Buffer)[],
    now = Date.now(),
  ): Promise<'rate_limited' | 'daily_limit' | PostgresClaimOutcome> {
    return this.call('pmf_charge_claim_v2', c, claim, now);
  }

  private async call<T>(fn: string, c: MessageCharge, more: unknown[], now: number): Promise<T> {
    const args = [
      c.userId,
      c.messageId,
      Buffer.from(c.salt),
      c.freeFrames,
      c.perMinute,
      windowStart('requests', now),
      c.perDay,
      windowStart('messages', now),
      c.allowance,
      ...more,
    ];
    const [rows] = await Promise.all([
      this.db.all<{ outcome: T }>(
        `SELECT ${fn}(${args.map(() => '?').join(', ')}) AS outcome`,
        args,
        BOOKKEEPING, // as each of its statements on SQLite
      ),
      this.windows.prunePast(c.userId, 'requests', now),
      this.windows.prunePast(c.userId, 'messages', now),
    ]);
    return rows[0].outcome;
  }

  /**
   * Counts one request frame naming `messageId` and marks the message
   * counted: whether it was counted before this frame, and its frames since
   * (a new message starts at 1; a counted one had at least 1, so it reads 2
   * or more); undefined when it was never delivered to this user. One
   * statement on every frame: a new message's charge does not write its
   * row twice. A refused charge takes the mark back (uncounted) in the same
   * atomic operation (SQLite's write, PostgreSQL's call), so no message is
   * counted without its charge; lost in a crash, the message is counted once
   * more, never less.
   */
  *frame(userId: number, messageId: string): Steps<{ frames: number; counted: boolean } | undefined> {
    const [row] = yield* rows<{ frames: number }>(
      'UPDATE messages SET rate_frames = CASE WHEN rate_counted = 1 THEN rate_frames + 1 ELSE 1 END, rate_counted = 1 WHERE user_id = ? AND message_id = ? RETURNING rate_frames AS frames',
      [userId, messageId],
    );
    return row && { frames: row.frames, counted: row.frames > 1 };
  }

  /** Takes back frame's mark of a new message whose charge was refused. */
  *uncounted(userId: number, messageId: string): Steps<void> {
    yield* changes('UPDATE messages SET rate_counted = 0 WHERE user_id = ? AND message_id = ?', [userId, messageId]);
  }

  /**
   * Takes `amount` from the key salt's lifetime allowance of `kind`, at most
   * `limit` in all; false (nothing taken) when it would pass it. One statement:
   * instances sharing the store never overspend it. Bookkeeping, as the rate
   * windows: lost only with a request whose answer never left.
   */
  *takeAllowance(salt: Uint8Array, kind: DailyKind, amount: number, limit: number): Steps<boolean> {
    if (amount > limit) return false;
    const taken = yield* rows(
      'INSERT INTO backlog_allowance (key_salt, kind, used) VALUES (?, ?, ?) ON CONFLICT (key_salt, kind) DO UPDATE SET used = backlog_allowance.used + ? WHERE backlog_allowance.used + ? <= ? RETURNING used',
      [Buffer.from(salt), kind, amount, amount, amount, limit],
    );
    return taken.length === 1;
  }

  /** Runs steps of the rate (message-rate.ts) as one operation: on SQLite one write of a commit batch. */
  run<T>(name: string, steps: Steps<T>): Promise<T> {
    return runSteps(this.db, name, steps, BOOKKEEPING);
  }
}
