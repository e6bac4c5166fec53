// The rows of the remote index's documents and entries (docs/remote-search.md#provider-store):
// writing a committed update's, looking addresses up, dropping entries. Every
// write may run again (after a crash) with the same result: ON CONFLICT DO
// NOTHING. The version bookkeeping around them is store.ts's.
import { ADDR_BYTES, CHECK_BYTES, type SearchAnswer, type UpdateBody } from '../../../protocol/remote-search.js';
import type { SqlDriver } from '../store-driver.js';

/** Rows per multi-row statement: 256 entries bind 1,024 values (both databases allow far more). */
const ROWS_PER_STATEMENT = 256;
/** Values of one IN (...) list. */
export const IN_LIST = 500;

export const buf = (b: Uint8Array): Buffer => Buffer.from(b.buffer, b.byteOffset, b.byteLength);
export const placeholders = (n: number, row = '?'): string => Array(n).fill(row).join(', ');

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
      db.run(
        `INSERT INTO ri_docs (user_id, doc, tag, sort, record) VALUES ${placeholders(part.length, '(?, ?, ?, ?, ?)')} ON CONFLICT DO NOTHING`,
        part.flatMap((d, j) => [userId, firstDoc + i + j, buf(d.tag), buf(d.sort), buf(d.record)]),
        'committed',
      ),
    );
  }
  const rows: unknown[] = [];
  const flush = (): void => {
    const n = rows.length / 4;
    writes.push(
      db
        .run(
          `INSERT INTO ri_entries (user_id, addr, doc, chk) VALUES ${placeholders(n, '(?, ?, ?, ?)')} ON CONFLICT DO NOTHING`,
          rows.splice(0),
          'committed',
        )
        .then((changed) => {
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
 * The documents of the given addresses, with each hit's check, and the
 * addresses of entries whose document is gone (orphans, for dropEntries).
 * Entries first, then each distinct document once (a message found under
 * several of a query's words is read once); positions are found by a map of
 * the addresses, with a chain for an address asked more than once.
 */
export async function lookUp(
  db: SqlDriver,
  userId: number,
  addrs: Uint8Array,
): Promise<{ answer: SearchAnswer; orphans: Buffer[] }> {
  const n = addrs.length / ADDR_BYTES;
  const bytes = buf(addrs);
  const first = new Map<string, number>();
  const repeat = new Int32Array(n).fill(-1);
  const keys: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const k = bytes.toString('latin1', i * ADDR_BYTES, (i + 1) * ADDR_BYTES);
    const p = first.get(k);
    if (p === undefined) {
      first.set(k, i);
      keys.push(bytes.subarray(i * ADDR_BYTES, (i + 1) * ADDR_BYTES));
    } else {
      repeat[i] = repeat[p];
      repeat[p] = i;
    }
  }
  const entryDoc = new Float64Array(n).fill(-1);
  const checks = new Uint32Array(n);
  const found = new Set<number>();
  for (let i = 0; i < keys.length; i += IN_LIST) {
    const part = keys.slice(i, i + IN_LIST);
    const rows = await db.all<{ addr: Uint8Array; doc: number; chk: Uint8Array }>(
      `SELECT addr, doc, chk FROM ri_entries WHERE user_id = ? AND addr IN (${placeholders(part.length)})`,
      [userId, ...part],
    );
    for (const r of rows) {
      const doc = Number(r.doc);
      const chk = buf(r.chk).readUInt32BE(0);
      for (let p = first.get(buf(r.addr).toString('latin1')) ?? -1; p >= 0; p = repeat[p]) {
        entryDoc[p] = doc;
        checks[p] = chk;
      }
      found.add(doc);
    }
  }
  const docNums = [...found];
  const docs: SearchAnswer['docs'] = [];
  const docIndex = new Map<number, number>();
  for (let i = 0; i < docNums.length; i += IN_LIST) {
    const part = docNums.slice(i, i + IN_LIST);
    const rows = await db.all<{ doc: number; tag: Uint8Array; sort: Uint8Array }>(
      `SELECT doc, tag, sort FROM ri_docs WHERE user_id = ? AND doc IN (${placeholders(part.length)})`,
      [userId, ...part],
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
      const addr = bytes.subarray(p * ADDR_BYTES, (p + 1) * ADDR_BYTES);
      if (first.get(addr.toString('latin1')) === p) orphans.push(Buffer.from(addr));
    }
  }
  return { answer: { docs, hits, checks }, orphans };
}

/** Drops the entries of these addresses; how many there were. */
export async function dropEntries(db: SqlDriver, userId: number, addrs: Buffer[]): Promise<number> {
  let dropped = 0;
  for (let i = 0; i < addrs.length; i += IN_LIST) {
    const part = addrs.slice(i, i + IN_LIST);
    dropped += await db.run(
      `DELETE FROM ri_entries WHERE user_id = ? AND addr IN (${placeholders(part.length)})`,
      [userId, ...part],
      'committed',
    );
  }
  return dropped;
}
