// The remote index in the provider's store (docs/remote-search.md#provider-store),
// on the same SQL driver as the rest of the store, SQLite or PostgreSQL.
//
// Every change is one row of ri_log, inserted by one statement that is also
// the compare-and-swap: it commits version v + 1 only while v is the latest
// (two devices racing: one insert wins, the other finds a newer version or
// breaks the primary key), only while every earlier version is materialized,
// and only within the account's quotas and with no tag already indexed. The
// documents and entries of a committed update are then put in place by
// idempotent statements (materialize); whoever next uses the account finishes
// a materialization a crash interrupted. So no operation needs a
// multi-statement transaction, on either database.
import type { Log } from '../log.js';
import type { SqlDriver } from '../store-driver.js';
import {
  BUCKETS,
  decodeUpdate,
  SIZE_CLASSES,
  type SearchAnswer,
  type StateBody,
  type UpdateBody,
} from '../../../protocol/remote-search.js';
import type { RemoteIndexLimits } from './limits.js';
import { buf, dropEntries, IN_LIST, inList, lookUp, writeRows } from './rows.js';

const UPDATE = 1;
const SNAPSHOT = 2;

export type CommitRefusal =
  | { refused: 'conflict'; version: number }
  | { refused: 'duplicate'; duplicates: Uint8Array[] }
  | { refused: 'quota'; message: string }
  | { refused: 'compact_first' };

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');

/** A snapshot's buckets in one blob: u32 BE offsets (BUCKETS + 1 of them), then the buckets. */
export function packBuckets(buckets: Uint8Array[]): Buffer {
  const head = Buffer.alloc(4 * (buckets.length + 1));
  let off = head.length;
  buckets.forEach((b, i) => {
    head.writeUInt32BE(off, 4 * i);
    off += b.length;
  });
  head.writeUInt32BE(off, 4 * buckets.length);
  return Buffer.concat([head, ...buckets.map(buf)]);
}

function bucketOf(packed: Buffer, i: number): Buffer {
  return packed.subarray(packed.readUInt32BE(4 * i), packed.readUInt32BE(4 * (i + 1)));
}

interface Account {
  materialized: number;
  docs: number;
  entries: number;
}

export class RemoteIndexStore {
  /** `sql` gives the store's current driver (Store.sql()), observed like every other statement. */
  constructor(
    private readonly sql: () => SqlDriver,
    private readonly limits: RemoteIndexLimits,
    private readonly log: Pick<Log, 'failed'> = { failed: () => undefined },
  ) {}

  private get db(): SqlDriver {
    return this.sql();
  }

  private async one<T>(sql: string, params: unknown[]): Promise<T | undefined> {
    return (await this.db.all<T>(sql, params))[0];
  }

  /** The account's row, made on first use. */
  private async account(userId: number): Promise<Account> {
    await this.db.run(
      'INSERT INTO ri_accounts (user_id, created_at) VALUES (?, ?) ON CONFLICT DO NOTHING',
      [userId, Date.now()],
      'committed',
    );
    const a = await this.one<Account>('SELECT materialized, docs, entries FROM ri_accounts WHERE user_id = ?', [
      userId,
    ]);
    return a!;
  }

  private async latest(userId: number): Promise<{ version: number; snapshot: number }> {
    const row = await this.one<{ version: number | null; snapshot: number | null }>(
      `SELECT MAX(version) AS version, MAX(CASE WHEN kind = ${SNAPSHOT} THEN version END) AS snapshot FROM ri_log WHERE user_id = ?`,
      [userId],
    );
    return { version: Number(row?.version ?? 0), snapshot: Number(row?.snapshot ?? 0) };
  }

  // ---- the wrapped search key --------------------------------------------------------------

  async getKey(userId: number): Promise<Buffer | undefined> {
    const row = await this.one<{ wrapped_key: Buffer | null }>(
      'SELECT wrapped_key FROM ri_accounts WHERE user_id = ?',
      [userId],
    );
    return row?.wrapped_key ? Buffer.from(row.wrapped_key) : undefined;
  }

  /** Sets the wrapped key once: false when the account has one (another device set it first). */
  async setKey(userId: number, wrapped: Uint8Array): Promise<boolean> {
    await this.account(userId);
    const changed = await this.db.run(
      'UPDATE ri_accounts SET wrapped_key = ? WHERE user_id = ? AND wrapped_key IS NULL',
      [buf(wrapped), userId],
    );
    return changed === 1;
  }

  // ---- committing -------------------------------------------------------------------------------

  /**
   * Commits the update as version baseVersion + 1, or says why not. `raw` is
   * the request body, kept until its documents are in place.
   */
  async commitUpdate(
    userId: number,
    u: UpdateBody,
    raw: Uint8Array,
  ): Promise<{ version: number; compact: boolean; collisions: number } | CommitRefusal> {
    const account = await this.catchUp(userId);
    const entries = u.docs.reduce((n, d) => n + SIZE_CLASSES[d.sizeClass], 0);
    if (account.docs + u.docs.length > this.limits.maxDocs || account.entries + entries > this.limits.maxEntries)
      return {
        refused: 'quota',
        message: `this account's index is full (at most ${this.limits.maxDocs} messages and ${this.limits.maxEntries} entries)`,
      };
    const deltas = await this.deltasSinceSnapshot(userId);
    if (deltas.count >= this.limits.maxDeltas || deltas.bytes + u.delta.length > this.limits.maxDeltaBytes)
      return { refused: 'compact_first' };
    const tags = u.docs.map((d) => buf(d.tag));
    const tagIn = inList(this.db.dialect, 'tag', tags, 'bytea');
    const version = u.baseVersion + 1;
    const inserted = await this.insertLog(userId, u.baseVersion, UPDATE, {
      tags: Buffer.concat(tags),
      state: buf(u.delta),
      body: buf(raw),
      guard: `AND NOT EXISTS (SELECT 1 FROM ri_docs WHERE user_id = ? AND ${tagIn.sql})`,
      guardParams: [userId, ...tagIn.params],
    });
    if (!inserted) {
      const duplicates = await this.existing(userId, tags);
      if (duplicates.length > 0) return { refused: 'duplicate', duplicates };
      return { refused: 'conflict', version: (await this.latest(userId)).version };
    }
    const collisions = await this.materialize(userId, version);
    const snapshotBytes = await this.snapshotBytes(userId);
    const compact =
      deltas.bytes + u.delta.length >= Math.max(this.limits.compactAfterBytes, snapshotBytes / 2) ||
      deltas.count + 1 >= this.limits.maxDeltas / 2;
    return { version, compact, collisions };
  }

  /** Commits a snapshot of every counter as baseVersion + 1; the log before it is dropped. */
  async commitSnapshot(
    userId: number,
    baseVersion: number,
    buckets: Uint8Array[],
  ): Promise<{ version: number } | CommitRefusal> {
    await this.catchUp(userId);
    const version = baseVersion + 1;
    const inserted = await this.insertLog(userId, baseVersion, SNAPSHOT, {
      tags: Buffer.alloc(0),
      state: packBuckets(buckets),
      body: null,
    });
    if (!inserted) return { refused: 'conflict', version: (await this.latest(userId)).version };
    await this.db.run(
      'UPDATE ri_accounts SET materialized = ? WHERE user_id = ? AND materialized = ?',
      [version, userId, baseVersion],
      'committed',
    );
    await this.db.run('DELETE FROM ri_log WHERE user_id = ? AND version < ?', [userId, version], 'committed');
    return { version };
  }

  /**
   * The compare-and-swap: inserts the log row of baseVersion + 1 only while
   * baseVersion is the latest and materialized, plus `guard`. False when it
   * did not (a lost race shows as a primary-key violation or no row).
   */
  private async insertLog(
    userId: number,
    baseVersion: number,
    kind: number,
    row: { tags: Buffer; state: Buffer; body: Buffer | null; guard?: string; guardParams?: unknown[] },
  ): Promise<boolean> {
    try {
      const inserted = await this.db.all(
        `INSERT INTO ri_log (user_id, version, kind, first_doc, tags, state, body, created_at)
         SELECT ?, ?, ?, a.next_doc, ?, ?, ?, ? FROM ri_accounts a
          WHERE a.user_id = ? AND a.materialized = ?
            AND (SELECT COALESCE(MAX(version), 0) FROM ri_log WHERE user_id = ?) = ? ${row.guard ?? ''}
         RETURNING version`,
        [
          userId,
          baseVersion + 1,
          kind,
          row.tags,
          row.state,
          row.body,
          Date.now(),
          userId,
          baseVersion,
          userId,
          baseVersion,
          ...(row.guardParams ?? []),
        ],
      );
      return inserted.length === 1;
    } catch (e) {
      if (this.db.violated(e) === 'unique') return false;
      throw e;
    }
  }

  private async deltasSinceSnapshot(userId: number): Promise<{ count: number; bytes: number }> {
    const row = await this.one<{ n: number; bytes: number | null }>(
      `SELECT COUNT(*) AS n, SUM(length(state)) AS bytes FROM ri_log WHERE user_id = ? AND kind = ${UPDATE}`,
      [userId],
    );
    return { count: Number(row?.n ?? 0), bytes: Number(row?.bytes ?? 0) };
  }

  private async snapshotBytes(userId: number): Promise<number> {
    const row = await this.one<{ bytes: number }>(
      `SELECT length(state) AS bytes FROM ri_log WHERE user_id = ? AND kind = ${SNAPSHOT}`,
      [userId],
    );
    return Number(row?.bytes ?? 0);
  }

  // ---- materializing ------------------------------------------------------------------------------

  /** Materializes every committed version not yet in place; the account as it then is. */
  async catchUp(userId: number): Promise<Account> {
    let account = await this.account(userId);
    const { version } = await this.latest(userId);
    while (account.materialized < version) {
      await this.materialize(userId, account.materialized + 1);
      account = await this.account(userId);
    }
    return account;
  }

  /**
   * Puts version v's documents and entries in place and marks it
   * materialized; every statement may run again (after a crash) with the
   * same result. Returns how many addresses were already taken by another
   * document (a repeated counter: never from an honest client).
   */
  private async materialize(userId: number, v: number): Promise<number> {
    const row = await this.one<{ kind: number; first_doc: number; body: Buffer | null }>(
      'SELECT kind, first_doc, body FROM ri_log WHERE user_id = ? AND version = ?',
      [userId, v],
    );
    if (!row) throw new Error(`remote index: version ${v} of user ${userId} is missing`);
    const firstDoc = Number(row.first_doc);
    let docs = 0;
    let entries = 0;
    let collisions = 0;
    if (row.kind === UPDATE && row.body) {
      const u = decodeUpdate(new Uint8Array(row.body));
      ({ docs, entries, collisions } = await writeRows(this.db, userId, firstDoc, u));
    }
    const marked = await this.db.run(
      'UPDATE ri_accounts SET materialized = ?, next_doc = ?, docs = docs + ?, entries = entries + ? WHERE user_id = ? AND materialized = ?',
      [v, firstDoc + docs, docs, entries, userId, v - 1],
      'committed',
    );
    if (marked === 1 && row.kind === UPDATE)
      await this.db.run('UPDATE ri_log SET body = NULL WHERE user_id = ? AND version = ?', [userId, v], 'committed');
    // Re-run after a crash, the rows are already there: only a first run counts collisions.
    if (marked === 1 && collisions > 0)
      this.log.failed(
        'remote-index-collision',
        `remote index: user ${userId} version ${v}: ${collisions} addresses already taken (a repeated counter)`,
        { level: 'info' },
      );
    return marked === 1 ? collisions : 0;
  }

  // ---- reading ----------------------------------------------------------------------------------

  /**
   * The state a device asked for (protocol/remote-search.ts StateBody), as
   * of one version: read again when another device committed or compacted
   * between the reads (a compaction drops the rows before it).
   */
  async state(userId: number, since: number, buckets?: number[]): Promise<StateBody> {
    await this.catchUp(userId);
    for (let attempt = 1; ; attempt++) {
      const { version, snapshot } = await this.latest(userId);
      const send = buckets ?? (since < snapshot ? [...Array(BUCKETS).keys()] : []);
      const row =
        snapshot > 0 && send.length > 0
          ? await this.one<{ state: Buffer }>('SELECT state FROM ri_log WHERE user_id = ? AND version = ?', [
              userId,
              snapshot,
            ])
          : undefined;
      const after = since < snapshot ? snapshot : since;
      const deltas = await this.db.all<{ version: number; tags: Buffer; state: Buffer }>(
        `SELECT version, tags, state FROM ri_log WHERE user_id = ? AND kind = ${UPDATE} AND version > ? AND version <= ? ORDER BY version`,
        [userId, after, version],
      );
      // Every version after the snapshot is an update: all of them must be there.
      const whole =
        deltas.length === Math.max(0, version - after) && (row !== undefined || snapshot === 0 || send.length === 0);
      if (!whole) {
        if (attempt >= 5) throw new Error(`remote index: user ${userId}'s index kept changing while it was read`);
        continue;
      }
      const packed = row && Buffer.from(row.state);
      return {
        version,
        snapshotVersion: snapshot,
        buckets: packed ? send.map((index) => ({ index, sealed: bucketOf(packed, index) })) : [],
        deltas: deltas.map((d) => ({
          version: Number(d.version),
          tags: Buffer.from(d.tags),
          sealed: Buffer.from(d.state),
        })),
      };
    }
  }

  /**
   * The documents of the given addresses. An entry whose document is gone
   * (put in place again by a materialization that raced the removal) is
   * dropped as it is found.
   */
  async search(userId: number, addrs: Uint8Array): Promise<SearchAnswer> {
    await this.catchUp(userId);
    const { answer, orphans } = await lookUp(this.db, userId, addrs);
    if (orphans.length > 0) {
      const dropped = await dropEntries(this.db, userId, orphans);
      await this.db.run(
        'UPDATE ri_accounts SET entries = entries - ? WHERE user_id = ?',
        [dropped, userId],
        'committed',
      );
    }
    return answer;
  }

  /** The sealed records of these tags, in order (undefined where none). */
  async records(userId: number, tags: Uint8Array[]): Promise<(Buffer | undefined)[]> {
    await this.catchUp(userId);
    const tagIn = inList(this.db.dialect, 'tag', tags.map(buf), 'bytea');
    const rows = await this.db.all<{ tag: Buffer; record: Buffer }>(
      `SELECT tag, record FROM ri_docs WHERE user_id = ? AND ${tagIn.sql}`,
      [userId, ...tagIn.params],
    );
    const by = new Map(rows.map((r) => [hex(r.tag), Buffer.from(r.record)]));
    return tags.map((t) => by.get(hex(t)));
  }

  /** The given tags that are indexed. */
  async existing(userId: number, tags: Uint8Array[]): Promise<Buffer[]> {
    const out: Buffer[] = [];
    for (let i = 0; i < tags.length; i += IN_LIST) {
      const tagIn = inList(this.db.dialect, 'tag', tags.slice(i, i + IN_LIST).map(buf), 'bytea');
      const rows = await this.db.all<{ tag: Buffer }>(`SELECT tag FROM ri_docs WHERE user_id = ? AND ${tagIn.sql}`, [
        userId,
        ...tagIn.params,
      ]);
      out.push(...rows.map((r) => Buffer.from(r.tag)));
    }
    return out;
  }

  async has(userId: number, tags: Uint8Array[]): Promise<boolean[]> {
    await this.catchUp(userId);
    const found = new Set((await this.existing(userId, tags)).map(hex));
    return tags.map((t) => found.has(hex(t)));
  }

  /**
   * Removes messages: their entries (padding too), then their records, so a
   * removal cut short leaves a record to remove again, never an entry
   * nobody can reach. Returns how many were indexed.
   */
  async remove(userId: number, tags: Uint8Array[]): Promise<number> {
    await this.catchUp(userId);
    let removed = 0;
    let entries = 0;
    for (let i = 0; i < tags.length; i += IN_LIST) {
      const tagIn = inList(this.db.dialect, 'tag', tags.slice(i, i + IN_LIST).map(buf), 'bytea');
      const these = [userId, ...tagIn.params];
      entries += await this.db.run(
        `DELETE FROM ri_entries WHERE user_id = ? AND doc IN
           (SELECT doc FROM ri_docs WHERE user_id = ? AND ${tagIn.sql})`,
        [userId, ...these],
        'committed',
      );
      removed += await this.db.run(`DELETE FROM ri_docs WHERE user_id = ? AND ${tagIn.sql}`, these);
    }
    await this.db.run('UPDATE ri_accounts SET docs = docs - ?, entries = entries - ? WHERE user_id = ?', [
      removed,
      entries,
      userId,
    ]);
    return removed;
  }

  /** Deletes the account's whole index, its wrapped key included. */
  async deleteAll(userId: number): Promise<void> {
    for (const table of ['ri_entries', 'ri_docs', 'ri_log', 'ri_accounts'])
      await this.db.run(`DELETE FROM ${table} WHERE user_id = ?`, [userId]);
  }

  /** Rows and bytes the account holds (for the bench and the operator). */
  async usage(userId: number): Promise<{ docs: number; entries: number; logBytes: number }> {
    const a = await this.account(userId);
    const row = await this.one<{ bytes: number | null }>(
      'SELECT SUM(length(tags) + length(state) + COALESCE(length(body), 0)) AS bytes FROM ri_log WHERE user_id = ?',
      [userId],
    );
    return { docs: Number(a.docs), entries: Number(a.entries), logBytes: Number(row?.bytes ?? 0) };
  }
}
