// The exactly-once ledger (docs/protocol.md#exactly-once-verdicts): a claim
// per (user, message, task) bound to its request, the computation holding it,
// and the answer recorded durably before it is sent.
import { randomBytes } from 'node:crypto';
import { BOOKKEEPING, changes, first, rows, runSteps, type SqlDriver, type Steps } from './store-driver.js';
import { checkSpend, type KeyEpochs, type KeySpend } from './store-keys.js';
import { DELIVERED, type Mailbox } from './store-mailbox.js';
import { LedgerBatches } from './ledger-batches.js';

export type Task = 'spam' | 'topics' | 'blocklist';

/**
 * A claim: `attempt` identifies this computation; only the attempt that is
 * still current may record its answer (another request may take over a claim
 * whose answer was never recorded, e.g. after a crash).
 */
export type ClaimResult = { attempt: Buffer } | 'unknown_message' | 'already_classified';

/** What a re-sent request finds: the recorded answer, or why there is none. */
export type RecordedAnswer = { answer: Buffer } | 'unknown_message' | 'already_classified' | 'not_answered';

const CLAIM_KEY = 'user_id = ? AND message_id = ? AND task = ?';

/** A claim whose answer left (or may have left) the provider. */
const CLASSIFIED = `SELECT 1 AS x FROM classified WHERE ${CLAIM_KEY} AND attempt IS NULL`;

/** Drops the user's unacknowledged answers older than the keep-th newest (Ledger.capAnswers). */
const CAP_ANSWERS = `UPDATE classified SET answer = NULL
  WHERE user_id = ? AND answer IS NOT NULL AND attempt IS NULL AND classified_at < (
    SELECT classified_at FROM classified WHERE user_id = ? AND answer IS NOT NULL
     ORDER BY classified_at DESC LIMIT 1 OFFSET ?)`;

/**
 * A claim's attempt id: random, so that claimers on other instances never
 * collide; only the provider ever sees it. Drawn from the CSPRNG 256 at a
 * time: one randomBytes call per claim cost about 2 % of the event loop
 * under load.
 */
const ATTEMPT_BYTES = 16;
let attempts = Buffer.alloc(0);
function newAttempt(): Buffer {
  if (attempts.length < ATTEMPT_BYTES) attempts = randomBytes(256 * ATTEMPT_BYTES);
  const attempt = Buffer.from(attempts.subarray(0, ATTEMPT_BYTES));
  attempts = attempts.subarray(ATTEMPT_BYTES);
  return attempt;
}

/** What pmf_claim_spend_v1 (store-postgres-functions.ts) answers. */
export type PostgresClaimOutcome = 'claimed' | 'unknown_message' | 'already_classified' | 'rotated';

/**
 * pmf_claim_spend_v1's arguments after the user and message: the claim's
 * task, time, request digest and new attempt, then the key spend (also the
 * tail of pmf_charge_claim_v2's, message-rate.ts chargeAndClaim).
 */
export function claimSpendArgs(
  task: Task,
  request: Uint8Array,
  spend: KeySpend,
): { attempt: Buffer; args: (string | number | Buffer)[] } {
  checkSpend(spend.count, spend.budget);
  const attempt = newAttempt();
  const { salt, modelId, version, epoch, budget, count } = spend;
  return {
    attempt,
    args: [task, Date.now(), Buffer.from(request), attempt, Buffer.from(salt), modelId, version, epoch, budget, count],
  };
}

export class Ledger {
  /**
   * PostgreSQL: the answers recorded without a cap and the acknowledgements
   * of all sessions in one turn, one statement each (a classification's
   * second and third round trips and transactions, shared).
   */
  private readonly batches: LedgerBatches | undefined;

  constructor(
    private readonly db: SqlDriver,
    private readonly mailbox: Mailbox,
    private readonly keys: KeyEpochs,
  ) {
    if (db.dialect === 'postgres') this.batches = new LedgerBatches(db);
  }

  /**
   * Claims `messageId` for `task` and binds the claim to `request` (the
   * SHA-256 of the request). Refuses ids never delivered to this user and
   * claims whose answer was recorded (docs/protocol.md#exactly-once-verdicts);
   * a claim whose answer was never recorded left nothing with the client, so
   * a new request takes it over and the earlier computation can no longer
   * record (nor send) its answer.
   */
  claim(userId: number, messageId: string, task: Task, request: Uint8Array): Promise<ClaimResult> {
    return runSteps(this.db, 'claim', this.claimSteps(userId, messageId, task, request), BOOKKEEPING);
  }

  private *claimSteps(userId: number, messageId: string, task: Task, request: Uint8Array): Steps<ClaimResult> {
    const attempt = newAttempt();
    const req = Buffer.from(request);
    // A claim released between the two statements is simply tried again.
    for (let tries = 0; tries < 3; tries++) {
      const inserted = yield* rows(
        'INSERT INTO classified (user_id, message_id, task, classified_at, request_sha256, attempt) SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM messages WHERE user_id = ? AND message_id = ?) ON CONFLICT DO NOTHING RETURNING attempt',
        [userId, messageId, task, Date.now(), req, attempt, userId, messageId],
      );
      if (inserted.length === 1) return { attempt };
      const taken = yield* changes(
        `UPDATE classified SET attempt = ?, request_sha256 = ?, classified_at = ? WHERE ${CLAIM_KEY} AND attempt IS NOT NULL`,
        [attempt, req, Date.now(), userId, messageId, task],
      );
      if (taken === 1) return { attempt };
      if ((yield* rows(CLASSIFIED, [userId, messageId, task])).length > 0) return 'already_classified';
      if ((yield* rows(DELIVERED, [userId, messageId])).length === 0) return 'unknown_message';
    }
    return 'already_classified';
  }

  /**
   * claim, then, once claimed, spends the decryptions of `spend` from its key
   * budget (KeyEpochs.spendUserKey); 'rotated' when that key epoch is used
   * up, and then the claim is released. On PostgreSQL both in one call of
   * pmf_claim_spend_v1 (store-postgres-functions.ts): one round trip and commit.
   */
  async claimAndSpend(
    userId: number,
    messageId: string,
    task: Task,
    request: Uint8Array,
    spend: KeySpend,
  ): Promise<ClaimResult | 'rotated'> {
    if (this.db.dialect === 'postgres') {
      const { attempt, args } = claimSpendArgs(task, request, spend); // checks the spend
      const [{ outcome }] = await this.db.all<{ outcome: PostgresClaimOutcome }>(
        'SELECT pmf_claim_spend_v1(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) AS outcome',
        [userId, messageId, ...args],
        BOOKKEEPING, // as its two steps
      );
      return outcome === 'claimed' ? { attempt } : outcome;
    }
    checkSpend(spend.count, spend.budget); // before the claim: a bad spend claims nothing
    return runSteps(this.db, 'claim_spend', this.claimSpendSteps(userId, messageId, task, request, spend), BOOKKEEPING);
  }

  /**
   * claimAndSpend's statements, as pmf_claim_spend_v1 runs them (on SQLite
   * one write of a commit batch; message-rate.ts chargeAndClaim runs them
   * after a frame's charge in the same write).
   */
  *claimSpendSteps(
    userId: number,
    messageId: string,
    task: Task,
    request: Uint8Array,
    spend: KeySpend,
  ): Steps<ClaimResult | 'rotated'> {
    const claim = yield* this.claimSteps(userId, messageId, task, request);
    if (typeof claim !== 'object') return claim;
    let spent: 'ok' | 'rotated';
    try {
      spent = yield* this.keys.spend(spend);
    } catch (e) {
      yield* this.releaseSteps(userId, messageId, task, claim.attempt);
      throw e;
    }
    if (spent === 'ok') return claim;
    yield* this.releaseSteps(userId, messageId, task, claim.attempt);
    return 'rotated';
  }

  /**
   * Records the answer of the claim's current `attempt` before it is sent,
   * durably (SQLite: the WAL synced after the commit, PostgreSQL: a sync
   * round after it), and with it every bookkeeping write before it; `null`
   * records that an answer left without keeping it (nothing to replay). False:
   * another request took the claim over, and this answer must not be sent.
   * With `keep`, the user's unacknowledged answers are then capped to that
   * many (capAnswers) in the same commit: one call of pmf_record_answer_v1
   * on PostgreSQL (store-postgres-functions.ts); without, on PostgreSQL one
   * statement with the other sessions' answers of the turn (ledger-batches.ts).
   */
  async recordAnswer(
    userId: number,
    messageId: string,
    task: Task,
    attempt: Buffer,
    answer: Uint8Array | null,
    keep?: number,
  ): Promise<boolean> {
    const bytes = answer === null ? null : Buffer.from(answer);
    if (keep === undefined && this.batches)
      return this.batches.record({ userId, messageId, task, attempt, answer: bytes });
    const record = `UPDATE classified SET answer = ?, attempt = NULL WHERE ${CLAIM_KEY} AND attempt = ?`;
    const params = [bytes, userId, messageId, task, attempt];
    if (keep === undefined) return (await this.db.run(record, params)) === 1;
    if (this.db.dialect === 'postgres') {
      const [{ recorded }] = await this.db.all<{ recorded: boolean }>(
        'SELECT pmf_record_answer_v1(?, ?, ?, ?, ?, ?) AS recorded',
        [userId, messageId, task, attempt, bytes, keep],
      );
      return recorded;
    }
    // One write of a commit batch: the cap in the answer's transaction, durable with it.
    return runSteps(
      this.db,
      'record_answer',
      (function* (): Steps<boolean> {
        const recorded = yield* changes(record, params);
        yield* changes(CAP_ANSWERS, [userId, userId, keep - 1]);
        return recorded === 1;
      })(),
    );
  }

  /** The recorded answer to exactly this request (same user, message and request hash). */
  async recordedAnswer(userId: number, messageId: string, task: Task, request: Uint8Array): Promise<RecordedAnswer> {
    const row = await first<{ request_sha256: Buffer | null; attempt: Buffer | null; answer: Buffer | null }>(
      this.db,
      `SELECT request_sha256, attempt, answer FROM classified WHERE ${CLAIM_KEY}`,
      [userId, messageId, task],
    );
    if (!row) return (await this.mailbox.isDelivered(userId, messageId)) ? 'not_answered' : 'unknown_message';
    if (row.attempt !== null) return 'not_answered';
    const same = row.request_sha256 !== null && Buffer.from(row.request_sha256).equals(Buffer.from(request));
    if (!same || row.answer === null) return 'already_classified';
    await this.db.durable(); // it is sent again: its record must be on disk, as before the first send
    return { answer: Buffer.from(row.answer) };
  }

  /** Whether an answer to exactly this request (same user, message and request hash) has left the provider. */
  async answered(userId: number, messageId: string, task: Task, request: Uint8Array): Promise<boolean> {
    const row = await first<{ request_sha256: Buffer | null }>(
      this.db,
      `SELECT request_sha256 FROM classified WHERE ${CLAIM_KEY} AND attempt IS NULL`,
      [userId, messageId, task],
    );
    if (row?.request_sha256 == null || !Buffer.from(row.request_sha256).equals(Buffer.from(request))) return false;
    await this.db.durable(); // as in recordedAnswer: the caller answers again
    return true;
  }

  /**
   * The client confirmed it has the answer: the recorded copy is dropped (the
   * claim stays). On PostgreSQL with the turn's other acknowledgements (ledger-batches.ts).
   */
  async acknowledge(userId: number, messageId: string, task: Task, request: Uint8Array): Promise<void> {
    if (this.batches) return this.batches.acknowledge({ userId, messageId, task, request: Buffer.from(request) });
    await this.db.run(
      `UPDATE classified SET answer = NULL WHERE ${CLAIM_KEY} AND request_sha256 = ?`,
      [userId, messageId, task, Buffer.from(request)],
      BOOKKEEPING,
    );
  }

  /**
   * Drops the recorded answers of claims made before `before` (ms) that were
   * never acknowledged; the claims stay, so a later spam_resend is
   * already_classified. Returns how many were dropped.
   */
  async pruneAnswers(before: number): Promise<number> {
    return this.db.run(
      'UPDATE classified SET answer = NULL WHERE answer IS NOT NULL AND attempt IS NULL AND classified_at < ?',
      [before],
    );
  }

  /**
   * Keeps at most the `keep` newest recorded answers of a user that were
   * never acknowledged and drops the older ones (their claims stay, like
   * pruneAnswers): a client that asks and never acknowledges grows the store
   * by at most `keep` answers, not by one per delivered message. Answers
   * recorded in the same millisecond as the keep-th newest all stay, and on
   * PostgreSQL one recorded concurrently may be counted by the next cap only.
   */
  async capAnswers(userId: number, keep: number): Promise<number> {
    return this.db.run(
      CAP_ANSWERS,
      [userId, userId, keep - 1],
      BOOKKEEPING, // lost in an OS crash, it leaves only answers that the next cap drops
    );
  }

  /**
   * Undoes a claim when its attempt failed before any answer left the
   * provider (the client learnt nothing), so the message can be classified again.
   */
  async releaseClaim(userId: number, messageId: string, task: Task, attempt: Buffer): Promise<void> {
    await runSteps(this.db, 'release', this.releaseSteps(userId, messageId, task, attempt), BOOKKEEPING);
  }

  private *releaseSteps(userId: number, messageId: string, task: Task, attempt: Buffer): Steps<void> {
    yield* changes(`DELETE FROM classified WHERE ${CLAIM_KEY} AND attempt = ?`, [userId, messageId, task, attempt]);
  }

  /** Whether an answer for this message left (or may have left) the provider. */
  async isClassified(userId: number, messageId: string, task: Task = 'spam'): Promise<boolean> {
    return (await first(this.db, CLASSIFIED, [userId, messageId, task])) !== undefined;
  }
}
