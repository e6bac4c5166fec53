// The ledger's writes that every session makes once per email, batched per
// turn of the event loop on PostgreSQL (TurnBatch): the answers recorded
// without a cap, and the acknowledgements. Each item changes exactly the row
// its own single-row statement would (Ledger.recordAnswer, acknowledge);
// one statement carries them all. Items go in key order, so batches running
// at once on several connections or instances lock rows in the same order;
// and they rarely share a row at all (each is recorded once per attempt, and
// acknowledged once per session holding its answer). Should PostgreSQL
// still fail a batch, every write of it fails as its own statement would:
// an answer is then not sent (its claim stays open for a new request), an
// acknowledgement is lost (its answer is capped or pruned later).
import { BOOKKEEPING, type SqlDriver } from './store-driver.js';
import type { Task } from './store-ledger.js';
import { TurnBatch } from './turn-batch.js';

/** A claim's row (user, message, task) and what a write of it is bound to: its attempt, or its request. */
interface ClaimRow {
  userId: number;
  messageId: string;
  task: Task;
}

export interface Recorded extends ClaimRow {
  attempt: Buffer;
  answer: Buffer | null;
}

export interface Acknowledged extends ClaimRow {
  request: Buffer;
}

const CLAIM_ROWS = '?::integer[], ?::text[], ?::text[]';
const JOIN = 'c.user_id = a.user_id AND c.message_id = a.message_id AND c.task = a.task';

/** Ledger.recordAnswer's UPDATE for many claims: the positions (from 1) of the items recorded are returned. */
const RECORD_ALL = `UPDATE classified c SET answer = a.answer, attempt = NULL
  FROM unnest(${CLAIM_ROWS}, ?::bytea[], ?::bytea[]) WITH ORDINALITY AS a(user_id, message_id, task, attempt, answer, i)
  WHERE ${JOIN} AND c.attempt = a.attempt
  RETURNING a.i`;

/** Ledger.acknowledge's UPDATE for many claims. */
const ACKNOWLEDGE_ALL = `UPDATE classified c SET answer = NULL
  FROM unnest(${CLAIM_ROWS}, ?::bytea[]) AS a(user_id, message_id, task, request_sha256)
  WHERE ${JOIN} AND c.request_sha256 = a.request_sha256`;

/** Key order (user, message, task): the order rows are locked in. */
const byKey = <T extends ClaimRow>(items: T[]): T[] =>
  [...items].sort(
    (x, y) =>
      x.userId - y.userId ||
      (x.messageId < y.messageId ? -1 : x.messageId > y.messageId ? 1 : 0) ||
      (x.task < y.task ? -1 : x.task > y.task ? 1 : 0),
  );

const claimColumns = (items: ClaimRow[]): unknown[] => [
  items.map((i) => i.userId),
  items.map((i) => i.messageId),
  items.map((i) => i.task),
];

export class LedgerBatches {
  /** Resolves to whether the answer was recorded, once it is on disk (as a durable write). */
  readonly record: (item: Recorded) => Promise<boolean>;
  /** Resolves once committed (bookkeeping). */
  readonly acknowledge: (item: Acknowledged) => Promise<void>;

  constructor(db: SqlDriver) {
    const records = new TurnBatch<Recorded, boolean>(async (items) => {
      const sorted = byKey(items);
      const rows = await db.all<{ i: number }>(RECORD_ALL, [
        ...claimColumns(sorted),
        sorted.map((i) => i.attempt),
        sorted.map((i) => i.answer),
      ]);
      const recorded = new Set(rows.map((r) => sorted[Number(r.i) - 1]));
      return items.map((i) => recorded.has(i));
    });
    const acks = new TurnBatch<Acknowledged>(async (items) => {
      const sorted = byKey(items);
      await db.run(ACKNOWLEDGE_ALL, [...claimColumns(sorted), sorted.map((i) => i.request)], BOOKKEEPING);
      return items.map(() => undefined);
    });
    this.record = (item) => records.add(item);
    this.acknowledge = (item) => acks.add(item);
  }
}
