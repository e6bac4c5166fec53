// The store's statements as metrics see them (metrics.ts: pmf_store_seconds,
// pmf_store_errors_total): a driver wrapper that times every statement until
// it resolves (a durable write until it is on disk) and reports failures
// other than constraint violations, which are the store's normal answers
// (a message delivered twice, a user who exists).
import { performance } from 'node:perf_hooks';
import type { SqlDriver } from './store-driver.js';

/** `statement`: its verb and table ("update classified"), or "sync" for a wait until commits are on disk. */
export type StatementObserver = (statement: string, seconds: number, failed: boolean) => void;

/** "verb table" of one of the store's statements: a small fixed set of label values. */
export function statementKind(sql: string): string {
  const call = /^\s*SELECT\s+(pmf_\w+)\(/i.exec(sql)?.[1];
  if (call) return `call ${call}`; // a function of the store's (store-postgres-functions.ts)
  const verb = (/^\s*(\w+)/.exec(sql)?.[1] ?? '?').toLowerCase();
  const table =
    verb === 'select'
      ? /\bFROM\s+(\w+)/i.exec(sql)?.[1]
      : /^\s*(?:INSERT\s+INTO|UPDATE|DELETE\s+FROM)\s+(\w+)/i.exec(sql)?.[1];
  return `${verb} ${table ?? '?'}`;
}

export function observedDriver(db: SqlDriver, observe: StatementObserver): SqlDriver {
  const kinds = new Map<string, string>();
  const timed = async <T>(kind: string, work: () => Promise<T>): Promise<T> => {
    const t0 = performance.now();
    try {
      const result = await work();
      observe(kind, (performance.now() - t0) / 1000, false);
      return result;
    } catch (e) {
      observe(kind, (performance.now() - t0) / 1000, db.violated(e) === undefined);
      throw e;
    }
  };
  const kindOf = (sql: string): string => {
    let kind = kinds.get(sql);
    if (kind === undefined) kinds.set(sql, (kind = statementKind(sql)));
    return kind;
  };
  return {
    dialect: db.dialect,
    all: (sql, params, durability) => timed(kindOf(sql), () => db.all(sql, params, durability)),
    run: (sql, params, durability) => timed(kindOf(sql), () => db.run(sql, params, durability)),
    // An operation of several statements as one write (SQLite): timed whole, as a function call on PostgreSQL.
    atomic:
      db.atomic && ((name, steps, durability) => timed(`step ${name}`, () => db.atomic!(name, steps, durability))),
    durable: () => timed('sync', () => db.durable()),
    violated: (e) => db.violated(e),
    schemaVersion: () => db.schemaVersion(),
    close: () => db.close(),
  };
}
