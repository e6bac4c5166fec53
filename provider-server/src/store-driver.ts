// What the store needs from a database (store-sqlite.ts, store-postgres.ts),
// and what every repository over it (store.ts and the store-*.ts files,
// tokens.ts, connection-gate.ts, remote-index/) is written against.
import type { Dialect } from './remote-index/schema.js';

/**
 * When a write resolves. `durable` (the default): once its commit is on disk.
 * `committed`: once committed, visible to every later statement and instance,
 * and on disk with the next durable commit at the latest (a database log is
 * written in commit order). Only for writes whose loss in an OS crash leaves
 * nothing wrong behind: nothing that depends on them leaves the provider
 * before a durable write that follows them, `Store.recordAnswer`.
 */
export type Durability = 'durable' | 'committed';

/** What the store needs from a database: `?` placeholders, rows as objects. */
export interface SqlDriver {
  /**
   * Which database: on PostgreSQL every statement is a round trip and a
   * commit, so an operation of several statements runs there as one call of
   * a function of the store's (store-postgres-functions.ts).
   */
  readonly dialect: Dialect;
  /** Rows of a query (or of a statement with RETURNING). */
  all<T>(sql: string, params?: unknown[], durability?: Durability): Promise<T[]>;
  /** Runs a statement; resolves to the number of rows it changed. */
  run(sql: string, params?: unknown[], durability?: Durability): Promise<number>;
  /**
   * Resolves once every commit made so far is on disk: what a reader sends
   * on must not be lost to an OS crash, even if it read the commit of a
   * write that is still waiting for its sync.
   */
  durable(): Promise<void>;
  /**
   * SQLite only: runs the statements of an operation (`steps`, driven
   * synchronously) as one write of the commit batch, under a savepoint: it
   * costs one commit round, however many statements it takes, and when one
   * of them fails (or the operation throws) none of its statements apply,
   * while the batch's other writes still commit. Resolves (`name`: for
   * metrics, `step name`) as a write of that durability. Without it (or
   * PostgreSQL, where an operation of several statements on the hot path is a
   * function of the store's) runSteps issues the statements one by one.
   */
  atomic?<T>(name: string, steps: Steps<T>, durability?: Durability): Promise<T>;
  /** Which constraint a failed statement broke, if that is why it failed. */
  violated(e: unknown): 'unique' | 'foreign_key' | undefined;
  schemaVersion(): Promise<number>;
  close(): Promise<void>;
}

/**
 * The per-request bookkeeping before and after an answer (rate windows,
 * claims, key budgets, releases, acknowledgements) resolves once committed:
 * the answer's durable record follows it in the log, so an OS crash can only
 * lose such writes for requests whose answer never left (and acknowledgements,
 * whose loss keeps an answer until it is pruned). See docs/protocol.md#exactly-once-verdicts.
 */
export const BOOKKEEPING: Durability = 'committed';

/** One statement of an operation that runs as steps: its rows, or the number of rows it changed. */
export interface Statement {
  sql: string;
  params: unknown[];
  rows: boolean;
}

/**
 * An operation of several statements written once for every way of running
 * it (runSteps, SqlDriver.atomic): it yields each statement and is resumed
 * with its result (a failed statement is thrown into it); it returns the outcome.
 */
export type Steps<T> = Generator<Statement, T, unknown>;

/** The rows of a statement inside Steps (a query, or a statement with RETURNING). */
export function* rows<T>(sql: string, params: unknown[]): Generator<Statement, T[], unknown> {
  return (yield { sql, params, rows: true }) as T[];
}

/** The number of rows a statement inside Steps changed. */
export function* changes(sql: string, params: unknown[]): Generator<Statement, number, unknown> {
  return (yield { sql, params, rows: false }) as number;
}

/**
 * Runs an operation of several statements: as one atomic write where the
 * driver has one (SQLite), else one statement after the other, each atomic
 * on its own (as every operation of the store is written to be correct so).
 */
export async function runSteps<T>(
  db: SqlDriver,
  name: string,
  steps: Steps<T>,
  durability: Durability = 'durable',
): Promise<T> {
  if (db.atomic) return db.atomic(name, steps, durability);
  let next = steps.next();
  while (!next.done) {
    const { sql, params, rows } = next.value;
    let result: unknown;
    try {
      result = rows ? await db.all(sql, params, durability) : await db.run(sql, params, durability);
    } catch (e) {
      next = steps.throw(e);
      continue;
    }
    next = steps.next(result);
  }
  return next.value;
}

/** The first row of a query, if any. */
export async function first<T>(db: SqlDriver, sql: string, params: unknown[]): Promise<T | undefined> {
  return (await db.all<T>(sql, params))[0];
}
