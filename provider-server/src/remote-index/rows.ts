// The rows of the remote index's documents and entries (docs/remote-search.md#provider-store):
// writing a committed update's, looking addresses up, dropping entries. Every
// write may run again (after a crash) with the same result: ON CONFLICT DO
// NOTHING. The version bookkeeping around them is store.ts's.
import { ADDR_BYTES, CHECK_BYTES, type SearchAnswer, type UpdateBody } from '../../../protocol/remote-search.js';
import type { SqlDriver } from '../store-driver.js';

/** Rows per multi-row statement: 256 entries bind 1,024 values (both databases allow far more). */
const ROWS_PER_STATEMENT = 256;
/** Values of one IN (...) list. */
export const IN_LIST = 512;

export const buf = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
const placeholders = (n: number, row = '?'): string => Array(n).fill(row).join(', ');

/**
 * A list of n placeholders is a statement of its own per n, and each stays
 * prepared (tens of kilobytes each, on every PostgreSQL connection and in
 * the provider's SQLite connection).
 * PostgreSQL takes a list as one array parameter (one statement for any
 * count); SQLite, which has no arrays, gets lists padded with NULL (which
 * matches nothing) to the next power of two: at most ten statements a shape.
 */
const paddedLength = (n: number): number => 2 ** Math.ceil(Math.log2(Math.max(n, 1)));
const padded = (values: readonly unknown[]): unknown[] => [
  ...values,
  ...Array<null>(paddedLength(values.length) - values.length).fill(null),
];

/** `column IN (values)` and its parameters (paddedLength says how). */
export function inList(
  dialect: SqlDriver['dialect'],
  column: string,
  values: readonly unknown[],
  type: 'bytea' | 'bigint',
): { sql: string; params: unknown[] } {
  return dialect === 'postgres'
    ? { sql: `${column} = ANY(?::${type}[])`, params: [values] }
    : { sql: `${column} IN (${placeholders(paddedLength(values.length))})`, params: padded(values) };
}

/**
 * INSERT … ON CONFLICT DO NOTHING of rows given as `flat` values, row after
 * row: on PostgreSQL one array per column (unnest), one statement for any
 * number of rows; on SQLite in runs of a power of two (13 = 8 + 4 + 1), at
 * most nine statements a table (paddedLength says why). Resolves to the rows
 * inserted.
 */
async function insertIgnoring(
  db: SqlDriver,
  table: string,
  columns: readonly (readonly [name: string, type: string])[],
  flat: unknown[],
): Promise<number> {
  const width = columns.length;
  const n = flat.length / width;
  const into = `INSERT INTO ${table} (${columns.map(([name]) => name).join(', ')})`;
  if (db.dialect === 'postgres') {
    const arrays = columns.map((_, c) => Array.from({ length: n }, (_, r) => flat[r * width + c]));
    const unnest = columns.map(([, type]) => `?::${type}[]`).join(', ');
    return db.run(`${into} SELECT * FROM unnest(${unnest}) ON CONFLICT DO NOTHING`, arrays, 'committed');
  }
  const runs: Promise<number>[] = [];
  for (let at = 0; at < n;) {
    const k = 2 ** Math.floor(Math.log2(n - at));
    const sql = `${into} VALUES ${placeholders(k, `(${placeholders(width)})`)} ON CONFLICT DO NOTHING`;
    runs.push(db.run(sql, flat.slice(at * width, (at + k) * width), 'committed'));
    at += k;
  }
  return (await Promise.all(runs)).reduce((sum, inserted) => sum + inserted, 0);
}
const DOC_COLUMNS = [
  ['user_id', 'integer'],
  ['doc', 'bigint'],
  ['tag', 'bytea'],
  ['sort', 'bytea'],
  ['record', 'bytea'],
] as const;
const ENTRY_COLUMNS = [
  ['user_id', 'integer'],
  ['addr', 'bytea'],
  ['doc', 'bigint'],
  ['chk', 'bytea'],
] as const;

/**
 * An update's documents (numbered from firstDoc) and entries. Returns the
 * counts and how many addresses were already taken by another document (a
 * repeated counter: never from an honest client; on a re-run, every one).
 */
export async function writeRows(
  db: SqlDriver,
  userId: number,
  firstDoc: number,
  u: UpdateBody,
): Promise<{ docs: number; entries: number; collisions: number }> {
  let entries = 0;
  let collisions = 0;
  const writes: Promise<number>[] = [];
  for (let i = 0; i < u.docs.length; i += ROWS_PER_STATEMENT) {
    const part = u.docs.slice(i, i + ROWS_PER_STATEMENT);
    writes.push(
      insertIgnoring(
        db,
        'ri_docs',
        DOC_COLUMNS,
        part.flatMap((d, j) => [userId, firstDoc + i + j, buf(d.tag), buf(d.sort), buf(d.record)]),
      ),
    );
  }
  const rows: unknown[] = [];
  const flush = (): void => {
    const n = rows.length / 4;
    writes.push(
      insertIgnoring(db, 'ri_entries', ENTRY_COLUMNS, rows.splice(0)).then((changed) => {
        collisions += n - changed;
        return changed;
      }),
    );
  };
  u.docs.forEach((d, j) => {
    for (let e = 0; e < d.addrs.length / ADDR_BYTES; e++) {
      const addr = buf(d.addrs.subarray(e * ADDR_BYTES, (e + 1) * ADDR_BYTES));
      rows.push(userId, addr, firstDoc + j, buf(d.checks.subarray(e * CHECK_BYTES, (e + 1) * CHECK_BYTES)));
      entries++;
      if (rows.length === 4 * ROWS_PER_STATEMENT) flush();
    }
  });
  if (rows.length > 0) flush();
  await Promise.all(writes);
  return { docs: u.docs.length, entries, collisions };
}

/**
 * The statement finding the entries of n addresses by their position in the
 * request: each address probes the primary key and a row names its position
 * instead of carrying the address back. SQLite: a UNION of one SELECT per
 * address (CROSS JOIN keeps that order; at most 500 in one statement),
 * padded as inList's lists are (a NULL address finds nothing).
 * PostgreSQL: the addresses as one array, the same prepared statement for
 * any count (the UNION, a statement per count with 251 branches to plan,
 * took four times SQLite's query time at 40K messages: bench
 * `remote-search`, `query_postgres`).
 */
const byPosition = (dialect: SqlDriver['dialect'], n: number): string => {
  if (dialect === 'postgres')
    return `SELECT q.p - 1 AS p, e.doc, e.chk FROM unnest(?::bytea[]) WITH ORDINALITY AS q(a, p)
      JOIN ri_entries e ON e.user_id = ? AND e.addr = q.a`;
  let sql = positionStatements.get(n);
  if (sql === undefined) {
    // The empty first branch types the list as the column.
    const list = Array.from({ length: n }, (_, i) => ` UNION ALL SELECT ${i}, ?`).join('');
    sql = `WITH q(p, a) AS (SELECT 0, addr FROM ri_entries WHERE 1 = 0${list})
      SELECT q.p, e.doc, e.chk FROM q CROSS JOIN ri_entries e WHERE e.user_id = ? AND e.addr = q.a`;
    positionStatements.set(n, sql);
  }
  return sql;
};
const positionStatements = new Map<number, string>();
/** Addresses per statement: SQLite's UNION takes at most 500 SELECTs; PostgreSQL's array is bounded for memory. */
const POSITIONS = { sqlite: 256, postgres: 4096 };

/**
 * The documents of the given addresses, with each hit's check, and the
 * addresses of entries whose document is gone (orphans, for dropEntries).
 * Entries first, by position, then each distinct document once (a message
 * found under several of a query's words is read once).
 */
export async function lookUp(
  db: SqlDriver,
  userId: number,
  addrs: Uint8Array,
): Promise<{ answer: SearchAnswer; orphans: Buffer[] }> {
  const n = addrs.length / ADDR_BYTES;
  const bytes = buf(addrs);
  const entryDoc = new Float64Array(n).fill(-1);
  const checks = new Uint32Array(n);
  const found = new Set<number>();
  const per = POSITIONS[db.dialect];
  for (let start = 0; start < n; start += per) {
    const part: Buffer[] = [];
    for (let i = start; i < Math.min(n, start + per); i++)
      part.push(bytes.subarray(i * ADDR_BYTES, (i + 1) * ADDR_BYTES));
    const sql = byPosition(db.dialect, paddedLength(part.length));
    const params = db.dialect === 'postgres' ? [part, userId] : [...padded(part), userId];
    const rows = await db.all<{ p: number; doc: number; chk: Uint8Array }>(sql, params);
    for (const r of rows) {
      const doc = Number(r.doc);
      entryDoc[start + Number(r.p)] = doc;
      checks[start + Number(r.p)] = buf(r.chk).readUInt32BE(0);
      found.add(doc);
    }
  }
  const docNums = [...found];
  const docs: SearchAnswer['docs'] = [];
  const docIndex = new Map<number, number>();
  for (let i = 0; i < docNums.length; i += IN_LIST) {
    const part = docNums.slice(i, i + IN_LIST);
    const docIn = inList(db.dialect, 'doc', part, 'bigint');
    const rows = await db.all<{ doc: number; tag: Uint8Array; sort: Uint8Array }>(
      `SELECT doc, tag, sort FROM ri_docs WHERE user_id = ? AND ${docIn.sql}`,
      [userId, ...docIn.params],
    );
    for (const r of rows) docIndex.set(Number(r.doc), docs.push({ tag: buf(r.tag), sort: buf(r.sort) }));
  }
  const hits = new Uint32Array(n);
  const orphans: Buffer[] = [];
  for (let p = 0; p < n; p++) {
    if (entryDoc[p] < 0) continue;
    const d = docIndex.get(entryDoc[p]);
    if (d !== undefined) hits[p] = d;
    else {
      checks[p] = 0;
      orphans.push(Buffer.from(bytes.subarray(p * ADDR_BYTES, (p + 1) * ADDR_BYTES)));
    }
  }
  return { answer: { docs, hits, checks }, orphans };
}

/** Drops the entries of these addresses; how many there were. */
export async function dropEntries(db: SqlDriver, userId: number, addrs: Buffer[]): Promise<number> {
  let dropped = 0;
  for (let i = 0; i < addrs.length; i += IN_LIST) {
    const part = addrs.slice(i, i + IN_LIST);
    const addrIn = inList(db.dialect, 'addr', part, 'bytea');
    dropped += await db.run(
      `DELETE FROM ri_entries WHERE user_id = ? AND ${addrIn.sql}`,
      [userId, ...addrIn.params],
      'committed',
    );
  }
  return dropped;
}
