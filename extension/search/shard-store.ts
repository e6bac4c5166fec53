// What the index's writer and reader share (lunr's builder and index, over
// one store): the manifest (the sealed shards, their tombstones, the sealed
// boundary), the hot shard, the sealed shards in memory, and the encrypted
// records behind them (store.ts). Every change to the memory state follows a
// committed write, in one synchronous step, so a reader never sees half of one.
import type { IDBPTransaction } from 'idb';
import type { CompactShard } from './compact-shard.js';
import type { RecordCipher } from './crypto.js';
import { decodeChunk, encodeChunk, type ChunkEntry } from './doc-chunks.js';
import { MailSearchError } from './errors.js';
import { indexable, type StoredDoc } from './mail-doc.js';
import { PendingShard } from './pending-shard.js';
import { ShardBuilder } from './shard-builder.js';
import {
  chunkAad,
  docAad,
  MANIFEST_AAD,
  shardAad,
  writeAtomically,
  type DocRecord,
  type SearchDb,
  type SearchSchema,
  type WriteOp,
} from './store.js';

/** Documents per sealed shard (and the hot shard's capacity). */
export const SHARD_SIZE = 1000;

export interface ShardMeta {
  id: number;
  /** Sequence numbers lo <= seq < hi belong to this shard. */
  lo: number;
  hi: number;
  /** Documents in the lunr index, tombstoned ones included (lunr's N). */
  docCount: number;
  tombstones: number[];
}

export interface Manifest {
  sealedUpTo: number;
  nextShardId: number;
  shards: ShardMeta[];
}

type DocsTx = IDBPTransaction<SearchSchema, ['docs', 'chunks'], 'readonly'>;

/** Runs an operation in the index's queue (rejects once the index is closed). */
export type Schedule = (op: () => Promise<void>) => Promise<void>;

const isInt = (x: unknown): x is number => Number.isInteger(x) && (x as number) >= 0;

export function isManifest(m: Manifest): boolean {
  return (
    isInt(m?.sealedUpTo) &&
    isInt(m.nextShardId) &&
    Array.isArray(m.shards) &&
    m.shards.every((s) => isInt(s.id) && isInt(s.lo) && isInt(s.hi) && isInt(s.docCount) && Array.isArray(s.tombstones))
  );
}

const fromUtf8 = new TextDecoder();

export class ShardStore {
  hot = new ShardBuilder();
  /** Live documents of the hot shard, and the ones replaced or removed since it was started. */
  readonly hotLive = new Set<number>();
  readonly hotDead = new Set<number>();
  nextSeq = 0;
  tombstones = new Map<number, Set<number>>();
  /** Sealed shards in memory; filled by the first search (writers never need them). */
  loaded?: Map<number, CompactShard>;
  /** Messages added but not yet stored, searchable meanwhile. */
  readonly pending = new PendingShard();

  constructor(
    readonly db: SearchDb,
    readonly cipher: RecordCipher,
    public manifest: Manifest,
  ) {
    this.applyManifest(manifest);
  }

  /** Rebuilds the hot shard from the stored documents past the sealed boundary. */
  async loadHot(): Promise<void> {
    const entries: [number, DocRecord][] = [];
    let cursor = await this.db.transaction('docs').store.openCursor(IDBKeyRange.lowerBound(this.manifest.sealedUpTo));
    while (cursor) {
      entries.push([cursor.key, cursor.value]);
      cursor = await cursor.continue();
    }
    const docs = await this.openDocs(entries);
    entries.forEach(([seq], i) => {
      this.hot.add(indexable(docs[i], seq));
      this.hotLive.add(seq);
    });
    this.nextSeq = Math.max(this.manifest.sealedUpTo, entries.length ? entries[entries.length - 1][0] + 1 : 0);
  }

  /** Live documents, and tombstoned ones not yet compacted away. */
  counts(): { live: number; dead: number } {
    let live = this.hotLive.size;
    let dead = this.hotDead.size;
    for (const s of this.manifest.shards) {
      live += s.docCount - s.tombstones.length;
      dead += s.tombstones.length;
    }
    return { live, dead };
  }

  /** Whether a stored message is still indexed (not removed, replaced or compacted away). */
  isLive(seq: number): boolean {
    if (seq >= this.manifest.sealedUpTo) return this.hotLive.has(seq);
    const shard = this.manifest.shards.find((s) => s.lo <= seq && seq < s.hi);
    return shard !== undefined && !this.tombstones.get(shard.id)!.has(seq);
  }

  applyManifest(m: Manifest): void {
    this.manifest = m;
    this.tombstones = new Map(m.shards.map((s) => [s.id, new Set(s.tombstones)]));
  }

  retireHot(seq: number): void {
    this.hotLive.delete(seq);
    this.hotDead.add(seq);
  }

  /** The manifest with these sealed sequence numbers tombstoned. */
  withTombstones(seqs: number[]): Manifest {
    return {
      ...this.manifest,
      shards: this.manifest.shards.map((s) => {
        const mine = seqs.filter((q) => s.lo <= q && q < s.hi);
        return mine.length ? { ...s, tombstones: [...s.tombstones, ...mine] } : s;
      }),
    };
  }

  /**
   * Decrypts stored messages from their 'docs' rows; each chunk is read and
   * decrypted once. A row must name a chunk entry with its own seq and tag.
   */
  async openDocs(rows: [number, DocRecord | undefined][], tx?: DocsTx): Promise<StoredDoc[]> {
    const chunkKeys = new Set<number>();
    for (const [seq, rec] of rows) {
      if (!rec || typeof rec.h !== 'string' || ('c' in rec && !isInt(rec.c))) {
        throw new MailSearchError('integrity', `Search index record doc|${seq} is missing or malformed`);
      }
      if ('c' in rec) chunkKeys.add(rec.c);
    }
    const chunks = await this.readChunks([...chunkKeys], tx);
    return Promise.all(
      rows.map(async ([seq, rec]) => {
        let json: Uint8Array;
        if ('c' in rec!) {
          const entry = chunks.get(rec.c)!.find((e) => e.seq === seq);
          if (!entry || entry.tag !== rec.h) {
            throw new MailSearchError('integrity', `Search index record doc|${seq} does not match its chunk`);
          }
          json = entry.json;
        } else {
          json = await this.cipher.open(docAad(seq, rec!.h), rec);
        }
        try {
          return JSON.parse(fromUtf8.decode(json)) as StoredDoc;
        } catch {
          throw new MailSearchError('integrity', `Search index record doc|${seq} is malformed`);
        }
      }),
    );
  }

  /**
   * Stored messages by sequence number, rows and chunks read in one
   * transaction (a snapshot, though writes go on meanwhile); undefined for
   * one whose row is gone and that is no longer indexed (removed or replaced since).
   */
  async readDocs(seqs: number[]): Promise<(StoredDoc | undefined)[]> {
    const tx = this.db.transaction(['docs', 'chunks']);
    const rows = await Promise.all(seqs.map((q) => tx.objectStore('docs').get(q)));
    const kept = seqs.flatMap((q, i): [number, DocRecord | undefined][] =>
      rows[i] === undefined && !this.isLive(q) ? [] : [[q, rows[i]]],
    );
    const docs = await this.openDocs(kept, tx);
    const bySeq = new Map(kept.map(([q], i) => [q, docs[i]]));
    return seqs.map((q) => bySeq.get(q));
  }

  /** Reads and decrypts chunks by key (in one transaction, `tx` if given; decryption in parallel). */
  private async readChunks(keys: number[], shared?: DocsTx): Promise<Map<number, ChunkEntry[]>> {
    if (keys.length === 0) return new Map();
    const tx = shared ?? this.db.transaction(['docs', 'chunks']);
    const recs = await Promise.all(keys.map((k) => tx.objectStore('chunks').get(k)));
    if (!shared) await tx.done;
    const opened = await Promise.all(keys.map((k, i) => this.cipher.open(chunkAad(k), recs[i])));
    return new Map(
      keys.map((k, i) => {
        const entries = decodeChunk(opened[i]);
        if (!entries) throw new MailSearchError('integrity', `Search index record ${chunkAad(k)} is malformed`);
        return [k, entries];
      }),
    );
  }

  /**
   * The writes that delete these stored messages: their rows, and each chunk
   * holding some re-encrypted without them (or deleted once empty), so no
   * removed text stays on disk.
   */
  async dropDocs(seqs: number[]): Promise<WriteOp[]> {
    const tx = this.db.transaction('docs');
    const rows = await Promise.all(seqs.map((q) => tx.store.get(q)));
    await tx.done;
    const keys = new Set<number>();
    for (const r of rows) if (r && 'c' in r) keys.add(r.c);
    const drop = new Set(seqs);
    const ops: WriteOp[] = seqs.map((q) => ({ store: 'docs', delete: q }));
    for (const [key, entries] of await this.readChunks([...keys])) {
      const kept = entries.filter((e) => !drop.has(e.seq));
      ops.push(
        kept.length
          ? { store: 'chunks', put: await this.cipher.seal(chunkAad(key), encodeChunk(kept)), key }
          : { store: 'chunks', delete: key },
      );
    }
    return ops;
  }

  /**
   * Replaces shards first..last (manifest positions) by one built from their
   * live stored messages: compaction, and the upgrade of a shard an older version stored.
   */
  async rebuild(first: number, last: number): Promise<void> {
    const shards = this.manifest.shards;
    const victims = shards.slice(first, last + 1);
    const lo = victims[0].lo;
    const hi = victims[victims.length - 1].hi;

    const entries: [number, DocRecord][] = [];
    const range = IDBKeyRange.bound(lo, hi, false, true);
    for (let c = await this.db.transaction('docs').store.openCursor(range); c; c = await c.continue()) {
      entries.push([c.key, c.value]);
    }
    const builder = new ShardBuilder();
    const docs = await this.openDocs(entries);
    entries.forEach(([seq], i) => builder.add(indexable(docs[i], seq)));

    const id = this.manifest.nextShardId;
    const merged: ShardMeta[] = builder.size ? [{ id, lo, hi, docCount: builder.size, tombstones: [] }] : [];
    const next: Manifest = {
      ...this.manifest,
      nextShardId: id + 1,
      shards: [...shards.slice(0, first), ...merged, ...shards.slice(last + 1)],
    };
    const compact = await builder.buildInSlices();
    const shardRec = builder.size ? await this.cipher.sealBytes(shardAad(id), compact.serialize(), true) : undefined;
    const nextRec = await this.cipher.sealJson(MANIFEST_AAD, next);
    await writeAtomically(this.db, [
      ...victims.map((v) => ({ store: 'shards', delete: v.id }) as const),
      ...(shardRec ? [{ store: 'shards', put: shardRec, key: id } as const] : []),
      { store: 'meta', put: nextRec, key: 'manifest' },
    ]);
    this.applyManifest(next);
    if (this.loaded) {
      for (const v of victims) this.loaded.delete(v.id);
      if (builder.size) this.loaded.set(id, compact);
    }
  }
}
