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
 */
export async function lookUp(
  db: SqlDriver,
  userId: number,
  addrs: Uint8Array,
): Promise<{ answer: SearchAnswer; orphans: Buffer[] }> {
  const n = addrs.length / ADDR_BYTES;
  const position = new Map<string, number[]>();
  const keys: Buffer[] = [];
  for (let i = 0; i < n; i++) {
    const a = buf(addrs.subarray(i * ADDR_BYTES, (i + 1) * ADDR_BYTES));
    const k = a.toString('latin1');
    const p = position.get(k);
    if (p) p.push(i);
    else {
      position.set(k, [i]);
      keys.push(a);
    }
  }
  // Looked up in address order: neighbouring keys share B-tree pages.
  keys.sort(Buffer.compare);
  const hits = new Uint32Array(n);
  const checks = new Uint32Array(n);
  const docs: SearchAnswer['docs'] = [];
  const docIndex = new Map<number, number>();
  const orphans: Buffer[] = [];
  for (let i = 0; i < keys.length; i += IN_LIST) {
    const part = keys.slice(i, i + IN_LIST);
    const rows = await db.all<{
      addr: Buffer;
      doc: number;
      chk: Buffer;
      tag: Buffer | null;
      sort: Buffer | null;
    }>(
      `SELECT e.addr, e.doc, e.chk, d.tag, d.sort FROM ri_entries e LEFT JOIN ri_docs d ON d.user_id = e.user_id AND d.doc = e.doc
          WHERE e.user_id = ? AND e.addr IN (${placeholders(part.length)})`,
      [userId, ...part],
    );
    for (const r of rows) {
      if (!r.tag || !r.sort) {
        orphans.push(Buffer.from(r.addr));
        continue;
      }
      const doc = Number(r.doc);
      let d = docIndex.get(doc);
      if (d === undefined)
        docIndex.set(doc, (d = docs.push({ tag: Buffer.from(r.tag), sort: Buffer.from(r.sort) }) - 1));
      const chk = Buffer.from(r.chk).readUInt32BE(0);
      for (const p of position.get(Buffer.from(r.addr).toString('latin1')) ?? []) {
        hits[p] = d + 1;
        checks[p] = chk;
      }
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
