// The index's writer (lunr's builder): add() queues messages (write-behind),
// batches are stored encrypted with their chunks, a full hot shard is sealed,
// and removals tombstone sealed messages, compacting a shard with many. Its
// methods run inside the index's operation queue (mail-search.ts).
import { MailSearchError } from './errors.js';
import { CHUNK_DOCS, encodeChunk } from './doc-chunks.js';
import { docChars, indexable, type StoredDoc } from './mail-doc.js';
import { SHARD_SIZE, type Manifest, type Schedule, type ShardMeta, type ShardStore } from './shard-store.js';
import { ShardBuilder } from './shard-builder.js';
import { chunkAad, MANIFEST_AAD, shardAad, writeAtomically, writeNew, type WriteOp } from './store.js';

/** Fraction of tombstoned documents that triggers a shard rebuild. */
const COMPACT_RATIO = 0.25;
/** Documents written per IndexedDB transaction by addMany and by a flush of the write queue. */
const ADD_BATCH = 250;
/**
 * add() queues; the queue is written (one transaction per ADD_BATCH) when it
 * holds QUEUE_CAP messages or QUEUE_CAP_CHARS characters of text (that add
 * awaits the write), FLUSH_DELAY_MS after the first queued add, and before
 * count, stats, remove and addMany. Queries search the queue in memory (pending-shard.ts).
 */
export const QUEUE_CAP = ADD_BATCH;
const QUEUE_CAP_CHARS = 4_000_000;
export const FLUSH_DELAY_MS = 50;

const utf8 = new TextEncoder();

export class IndexWriter {
  /** Messages added but not yet written, by id (a later add of the same id replaces the queued one). */
  private readonly queue = new Map<string, StoredDoc>();
  private queuedChars = 0;
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  /** A failed write of queued messages, for the next add/addMany/flush/close to report. */
  private deferredError: unknown;

  constructor(
    private readonly store: ShardStore,
    private readonly schedule: Schedule,
  ) {}

  /** The queued message with this id, if any. */
  queued(id: string): StoredDoc | undefined {
    return this.queue.get(id);
  }

  /** Makes a message searchable at once, before its turn to be queued (enqueue) comes. */
  stage(valid: StoredDoc): void {
    this.store.pending.put(valid);
  }

  /** Queues a staged message; writes the queue if full, else makes sure a timed write will. */
  async enqueue(valid: StoredDoc): Promise<void> {
    const replaced = this.queue.get(valid.id);
    if (replaced) this.queuedChars -= docChars(replaced);
    this.queue.delete(valid.id); // a new version goes last, after what was queued before it
    this.queue.set(valid.id, valid);
    this.queuedChars += docChars(valid);
    if (this.queue.size >= QUEUE_CAP || this.queuedChars >= QUEUE_CAP_CHARS) {
      await this.writeQueue();
    } else {
      this.flushTimer ??= setTimeout(() => {
        this.flushTimer = undefined;
        void this.schedule(() => this.writeQueue()).catch(() => undefined);
      }, FLUSH_DELAY_MS);
    }
    this.throwDeferred();
  }

  /** Writes the queue, then these documents (durable when it resolves). */
  async addMany(valid: StoredDoc[], onProgress?: (done: number, total: number) => void): Promise<void> {
    this.throwDeferred();
    await this.writeQueue();
    this.throwDeferred();
    await this.writeDocs(valid, onProgress);
  }

  /** Writes the queue; rejects with a failed queued write's error. */
  async flush(): Promise<void> {
    await this.writeQueue();
    this.throwDeferred();
  }

  /** Stops the timed write (the index is closing; close() has flushed). */
  stopTimer(): void {
    if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
  }

  /** Writes documents in atomic batches of up to ADD_BATCH, sealing the hot shard when full. */
  private async writeDocs(valid: StoredDoc[], onProgress?: (done: number, total: number) => void): Promise<void> {
    let done = 0;
    while (done < valid.length) {
      await this.sealIfFull();
      const room = SHARD_SIZE - this.store.hot.size;
      const n = Math.min(ADD_BATCH, room > 0 ? room : ADD_BATCH, valid.length - done);
      try {
        await this.writeBatch(valid.slice(done, done + n));
      } catch (err) {
        if (done === 0 || !(err instanceof MailSearchError)) throw err;
        throw new MailSearchError(
          err.code,
          `${err.message} (${done} of ${valid.length} messages were indexed before this)`,
        );
      }
      done += n;
      onProgress?.(done, valid.length);
    }
    await this.sealIfFull();
  }

  /**
   * Writes the queue (run inside an operation). A failure drops the
   * messages not written (each batch is atomic: nothing half-written, memory
   * untouched) and is kept for the next add/flush; reads go on with what is
   * stored. Queries do not wait for it: they search the pending messages too.
   */
  async writeQueue(): Promise<void> {
    this.stopTimer();
    if (this.queue.size === 0) return;
    const docs = [...this.queue.values()];
    this.queue.clear();
    this.queuedChars = 0;
    try {
      await this.writeDocs(docs);
    } catch (err) {
      const lost = `messages added with add() were not written and are not indexed: add them again`;
      this.deferredError ??=
        err instanceof MailSearchError ? new MailSearchError(err.code, `${err.message}; ${lost}`) : err;
    } finally {
      for (const d of docs) this.store.pending.retire(d); // the ones not written are dropped
      this.store.pending.compact();
    }
  }

  private throwDeferred(): void {
    const err = this.deferredError;
    if (err === undefined) return;
    this.deferredError = undefined;
    throw err;
  }

  /** Removes a message (queued ones are written first); false if it was not indexed. */
  async remove(id: string): Promise<boolean> {
    await this.writeQueue();
    const store = this.store;
    const h = store.cipher.tag(id);
    const seq = await store.db.getKeyFromIndex('docs', 'h', h);
    if (seq === undefined) return false;
    const shard = store.manifest.shards.find((s) => s.lo <= seq && seq < s.hi);
    const next = shard ? store.withTombstones([seq]) : undefined;
    const nextRec = next && (await store.cipher.sealJson(MANIFEST_AAD, next));
    await writeAtomically(store.db, [
      ...(await store.dropDocs([seq])),
      ...(nextRec ? [{ store: 'meta', put: nextRec, key: 'manifest' } as const] : []),
    ]);
    if (next) store.applyManifest(next);
    else if (seq >= store.manifest.sealedUpTo) store.retireHot(seq);
    if (shard) await this.compactIfNeeded(shard.id);
    return true;
  }

  private async writeBatch(batch: StoredDoc[]): Promise<void> {
    const { db, cipher } = this.store;
    const seqs = batch.map((_, i) => this.store.nextSeq + i);
    const tags = batch.map((d) => cipher.tag(d.id));
    const prepared = batch.map(
      (d, i) => this.store.pending.prepared(d, seqs[i]) ?? this.store.hot.prepare(indexable(d, seqs[i])),
    );
    const chunkAt = (i: number) => seqs[i - (i % CHUNK_DOCS)];
    const chunks = await Promise.all(
      seqs
        .filter((_, i) => i % CHUNK_DOCS === 0)
        .map(async (key, c) => {
          const entries = batch.slice(c * CHUNK_DOCS, (c + 1) * CHUNK_DOCS).map((d, k) => {
            const i = c * CHUNK_DOCS + k;
            return { seq: seqs[i], tag: tags[i], json: utf8.encode(JSON.stringify(d)) };
          });
          return { store: 'chunks', put: await cipher.seal(chunkAad(key), encodeChunk(entries)), key } as const;
        }),
    );
    const writes: WriteOp[] = [
      ...chunks,
      ...seqs.map((seq, i) => ({ store: 'docs', put: { h: tags[i], c: chunkAt(i) }, key: seq }) as const),
    ];
    // Common case, one transaction: new ids, written. If one is stored already (its tag
    // is taken) nothing was: look the tags up, then rewrite the replaced messages' chunks
    // (and, for sealed ones, the manifest) with the writes.
    let replaced: number[] = [];
    let next: Manifest | undefined;
    if (!(await writeNew(db, writes))) {
      const tx = db.transaction('docs');
      const olds = await Promise.all(tags.map((h) => tx.store.index('h').getKey(h)));
      await tx.done;
      replaced = olds.filter((o): o is number => o !== undefined);
      const sealed = replaced.filter((o) => o < this.store.manifest.sealedUpTo);
      next = sealed.length ? this.store.withTombstones(sealed) : undefined;
      const nextRec = next && (await cipher.sealJson(MANIFEST_AAD, next));
      await writeAtomically(db, [
        ...(await this.store.dropDocs(replaced)),
        ...writes,
        ...(nextRec ? [{ store: 'meta', put: nextRec, key: 'manifest' } as const] : []),
      ]);
    }
    // Committed: now (and only now) update the in-memory state.
    this.store.nextSeq += batch.length;
    for (const o of replaced) if (o >= this.store.manifest.sealedUpTo) this.store.retireHot(o);
    if (next) this.store.applyManifest(next);
    for (const p of prepared) {
      this.store.hot.add(p);
      this.store.hotLive.add(p.seq);
    }
    for (const d of batch) this.store.pending.retire(d);
  }

  /**
   * Seals a full hot shard. The messages are already stored, so a failed seal
   * (e.g. no space for the shard) fails nothing: it is retried at the next add,
   * and meanwhile the hot shard simply grows.
   */
  private async sealIfFull(): Promise<void> {
    if (this.store.hot.size < SHARD_SIZE) return;
    try {
      await this.seal();
    } catch (err) {
      if (!(err instanceof MailSearchError && (err.code === 'quota' || err.code === 'storage'))) throw err;
    }
  }

  /** Turns the hot shard into a sealed, stored shard. */
  private async seal(): Promise<void> {
    const store = this.store;
    const id = store.manifest.nextShardId;
    const shard: ShardMeta = {
      id,
      lo: store.manifest.sealedUpTo,
      hi: store.nextSeq,
      docCount: store.hot.size,
      tombstones: [...store.hotDead],
    };
    const next: Manifest = {
      sealedUpTo: store.nextSeq,
      nextShardId: id + 1,
      shards: [...store.manifest.shards, shard],
    };
    // Built in slices: a query arriving meanwhile waits for one slice, not the whole build,
    // and searches the hot shard, which stays as it is until the sealed one is stored.
    const compact = await store.hot.buildInSlices();
    const shardRec = await store.cipher.sealBytes(shardAad(id), compact.serialize(), true);
    const nextRec = await store.cipher.sealJson(MANIFEST_AAD, next);
    await writeAtomically(store.db, [
      { store: 'shards', put: shardRec, key: id },
      { store: 'meta', put: nextRec, key: 'manifest' },
    ]);
    store.applyManifest(next);
    store.loaded?.set(id, compact);
    store.hot = new ShardBuilder();
    store.hotLive.clear();
    store.hotDead.clear();
  }

  /** Rebuilds a shard with many tombstones from its live documents, merged with small successors. */
  private async compactIfNeeded(shardId: number): Promise<void> {
    const shards = this.store.manifest.shards;
    const first = shards.findIndex((s) => s.id === shardId);
    const live = (s: ShardMeta) => s.docCount - s.tombstones.length;
    if (first < 0 || shards[first].tombstones.length <= COMPACT_RATIO * shards[first].docCount) return;
    let last = first;
    let total = live(shards[first]);
    while (last + 1 < shards.length && total + live(shards[last + 1]) <= SHARD_SIZE) total += live(shards[++last]);
    await this.store.rebuild(first, last);
  }
}
