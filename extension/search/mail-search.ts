// Local keyword search over decrypted mail: a sharded lunr index, encrypted at
// rest in IndexedDB. No network access here: the index never leaves the device.
//
// Scheme (costs measured in README.md):
// - New mail goes into a "hot" shard (shard-builder.ts) that only tokenizes
//   on add; a query weighs only its own terms there (forQuery).
// - When the hot shard reaches SHARD_SIZE documents it is sealed: its compact
//   query form (compact-shard.ts) is serialized, gzip'd, encrypted and stored
//   as one record. Sealed shards are immutable and loaded only by the first
//   search. Shards of older versions (lunr JSON, or compact without a doc
//   table) are rebuilt from the stored messages when first loaded.
// - A query's result lines come from the shards' doc tables, in memory; only
//   snippets (optional) read and decrypt the stored messages of the hits.
// - remove() deletes the stored message (its row, and its text from its
//   chunk: doc-chunks.ts) and adds a tombstone (its sequence number) to the
//   manifest; queries drop tombstoned refs. A shard whose
//   tombstones exceed COMPACT_RATIO is rebuilt from its live documents, merged
//   with the following shard while the two fit in SHARD_SIZE.
// - Scores from different shards are made comparable by swapping each shard's
//   idf for the global one (CompactShard#run).
import { deleteDB } from 'idb';
import type { RecordCipher } from './crypto.js';
import { MailSearchError } from './errors.js';
import { checkKeySource, newIndexKeys, openIndexKeys, type KeySource } from './index-key.js';
import { CompactShard, idf, type DateRange } from './compact-shard.js';
import { CHUNK_DOCS, decodeChunk, encodeChunk, type ChunkEntry } from './doc-chunks.js';
import { compileQuery, parseQuery, PRESENCE, type IndexableDoc } from './lunr-shard.js';
import { ShardBuilder } from './shard-builder.js';
import { makeSnippet, matchRanges, type Range } from './snippet.js';
import { TopHits } from './top-hits.js';
import {
  chunkAad,
  docAad,
  MANIFEST_AAD,
  openStore,
  recordBytes,
  shardAad,
  writeAtomically,
  writeNew,
  type DocRecord,
  type WriteOp,
  type Header,
  type SearchDb,
} from './store.js';

export const DEFAULT_DB_NAME = 'pmf-search';
/** Documents per sealed shard (and the hot shard's capacity). */
export const SHARD_SIZE = 1000;
/** Fraction of tombstoned documents that triggers a shard rebuild. */
const COMPACT_RATIO = 0.25;
/** Shards loaded per step by searchSoon and the background loading it starts. */
const LOAD_STEP = 2;
/** Documents written per IndexedDB transaction by addMany and by a flush of the write queue. */
const ADD_BATCH = 250;
/**
 * add() queues; the queue is written (one transaction per ADD_BATCH) when it
 * holds QUEUE_CAP messages or QUEUE_CAP_CHARS characters of text (that add
 * awaits the write), FLUSH_DELAY_MS after the first queued add, and before
 * anything that reads the index.
 */
export const QUEUE_CAP = ADD_BATCH;
const QUEUE_CAP_CHARS = 4_000_000;
export const FLUSH_DELAY_MS = 50;
const MAX_ID_CHARS = 1024;
const MAX_HEADER_CHARS = 2048;
/** Bodies are indexed and stored up to this many characters (huge mails are cut, not refused). */
export const MAX_BODY_CHARS = 200_000;
const MAX_QUERY_CHARS = 1000;
const MAX_LIMIT = 1000;

/** A decrypted message, as handed over by the extension after decryption. */
export interface MailDoc {
  id: string;
  from: string;
  to?: string;
  subject: string;
  /** Milliseconds since the epoch, or any string Date.parse understands. */
  date: string | number;
  body: string;
  /** Where the message can be opened (e.g. the webmail's message URL). */
  url?: string;
}

export interface SearchHit {
  id: string;
  /** BM25 with global idf; comparable within one result list only. */
  score: number;
  subject: string;
  from: string;
  to?: string;
  /** Milliseconds since the epoch. */
  date: number;
  /** Plain text around the first match ("…" marks cuts). */
  snippet: string;
  url?: string;
  /** Character ranges of matched words, for highlighting. */
  highlights: { subject: Range[]; from: Range[]; snippet: Range[] };
}

export interface SearchOptions {
  /** At most this many hits, 1..1000 (default 20). */
  limit?: number;
  /** 'relevance' (default): best first; 'date': newest first. */
  sort?: 'relevance' | 'date';
  /** Only mail dated at or after / at or before this time (ms since the epoch). */
  after?: number;
  before?: number;
  /**
   * false: leave `snippet` empty (and its highlights). Hits then come from
   * memory alone; a snippet needs the message's stored, encrypted text.
   */
  snippets?: boolean;
}

/** Where the index is and one of `key`, `passphrase`, `derivedKey` (index-key.ts). */
export interface OpenOptions extends KeySource {
  dbName?: string;
}

export interface SearchStats {
  count: number;
  sealedShards: number;
  hotDocs: number;
  tombstones: number;
  /** Encrypted bytes of the index proper: sealed shards + manifest. */
  indexBytes: number;
  /** Encrypted bytes of stored messages (needed for snippets and compaction). */
  docBytes: number;
}

interface StoredDoc {
  id: string;
  from: string;
  to?: string;
  subject: string;
  date: number;
  body: string;
  url?: string;
}

interface ShardMeta {
  id: number;
  /** Sequence numbers lo <= seq < hi belong to this shard. */
  lo: number;
  hi: number;
  /** Documents in the lunr index, tombstoned ones included (lunr's N). */
  docCount: number;
  tombstones: number[];
}

interface Manifest {
  sealedUpTo: number;
  nextShardId: number;
  shards: ShardMeta[];
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** Opens (creating if needed) the encrypted search index. */
export async function openMailSearch(opts: OpenOptions = {}): Promise<MailSearch> {
  checkKeySource(opts);
  const dbName = opts.dbName ?? DEFAULT_DB_NAME;
  const db = await openStore(dbName);
  try {
    const header = (await db.get('meta', 'header')) as Header | undefined;
    const { cipher, manifest } = header ? await unlock(db, header, opts) : await initialize(db, opts);
    const search = new MailSearch(db, cipher, manifest);
    await search.loadHot();
    return search;
  } catch (err) {
    db.close();
    throw err;
  }
}

/** Deletes the whole index (e.g. when the user forgot the passphrase or removed the key). */
export async function deleteMailSearch(dbName = DEFAULT_DB_NAME): Promise<void> {
  await deleteDB(dbName);
}

async function initialize(db: SearchDb, opts: OpenOptions): Promise<{ cipher: RecordCipher; manifest: Manifest }> {
  const { header, wrapped, cipher } = await newIndexKeys(opts);
  const manifest: Manifest = { sealedUpTo: 0, nextShardId: 1, shards: [] };
  const manifestRec = await cipher.sealJson(MANIFEST_AAD, manifest);
  await writeAtomically(db, [
    { store: 'meta', put: header, key: 'header' },
    { store: 'meta', put: wrapped, key: 'keys' },
    { store: 'meta', put: manifestRec, key: 'manifest' },
  ]);
  return { cipher, manifest };
}

async function unlock(
  db: SearchDb,
  header: Header,
  opts: OpenOptions,
): Promise<{ cipher: RecordCipher; manifest: Manifest }> {
  const { cipher, migrated } = await openIndexKeys(header, await db.get('meta', 'keys'), opts);
  const manifest = await cipher.openJson<Manifest>(MANIFEST_AAD, await db.get('meta', 'manifest'));
  if (!isManifest(manifest)) throw new MailSearchError('integrity', 'The search index manifest is malformed');
  if (migrated) {
    await writeAtomically(db, [
      { store: 'meta', put: migrated.header, key: 'header' },
      { store: 'meta', put: migrated.wrapped, key: 'keys' },
    ]);
  }
  return { cipher, manifest };
}

type ValidSearch = Required<Pick<SearchOptions, 'limit' | 'sort' | 'snippets'>> & { range?: DateRange };

function validateSearch(query: unknown, o: SearchOptions): ValidSearch {
  if (typeof query !== 'string' || query.length > MAX_QUERY_CHARS) {
    throw new MailSearchError('bad-input', `The query must be a string of at most ${MAX_QUERY_CHARS} characters`);
  }
  if (typeof o !== 'object' || o === null) throw new MailSearchError('bad-input', 'Search options must be an object');
  const { limit = 20, sort = 'relevance', after, before, snippets = true } = o;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new MailSearchError('bad-input', `The result limit must be an integer from 1 to ${MAX_LIMIT}`);
  }
  if (sort !== 'relevance' && sort !== 'date') {
    throw new MailSearchError('bad-input', 'Results can be sorted by "relevance" or "date" only');
  }
  for (const d of [after, before]) {
    if (d !== undefined && !Number.isFinite(d)) throw new MailSearchError('bad-input', 'A date filter must be a date');
  }
  if (typeof snippets !== 'boolean') throw new MailSearchError('bad-input', 'The snippets option is true or false');
  if (after === undefined && before === undefined) return { limit, sort, snippets };
  return { limit, sort, snippets, range: { from: after ?? -Infinity, to: before ?? Infinity } };
}

const isInt = (x: unknown): x is number => Number.isInteger(x) && (x as number) >= 0;

function isManifest(m: Manifest): boolean {
  return (
    isInt(m?.sealedUpTo) &&
    isInt(m.nextShardId) &&
    Array.isArray(m.shards) &&
    m.shards.every((s) => isInt(s.id) && isInt(s.lo) && isInt(s.hi) && isInt(s.docCount) && Array.isArray(s.tombstones))
  );
}

function text(d: Record<string, unknown>, field: string, i: number, max: number, optional = false): string | undefined {
  const v = d[field];
  if (v === undefined && optional) return undefined;
  if (typeof v !== 'string') throw new MailSearchError('bad-input', `Message ${i}: "${field}" must be a string`);
  return v.length > max ? v.slice(0, max) : v;
}

function validateDoc(raw: unknown, i: number): StoredDoc {
  if (typeof raw !== 'object' || raw === null) throw new MailSearchError('bad-input', `Message ${i} is not an object`);
  const d = raw as Record<string, unknown>;
  if (typeof d.id !== 'string' || d.id.length === 0 || d.id.length > MAX_ID_CHARS) {
    throw new MailSearchError(
      'bad-input',
      `Message ${i}: "id" must be a non-empty string of at most ${MAX_ID_CHARS} characters`,
    );
  }
  const date = typeof d.date === 'number' ? d.date : typeof d.date === 'string' ? Date.parse(d.date) : NaN;
  if (!Number.isFinite(date)) throw new MailSearchError('bad-input', `Message ${i}: "date" is not a valid date`);
  const doc: StoredDoc = {
    id: d.id,
    from: text(d, 'from', i, MAX_HEADER_CHARS)!,
    subject: text(d, 'subject', i, MAX_HEADER_CHARS)!,
    date,
    body: text(d, 'body', i, MAX_BODY_CHARS)!,
  };
  const to = text(d, 'to', i, MAX_HEADER_CHARS, true);
  const url = text(d, 'url', i, MAX_HEADER_CHARS, true);
  if (to !== undefined) doc.to = to;
  if (url !== undefined) doc.url = url;
  return doc;
}

const indexable = (d: StoredDoc, seq: number): IndexableDoc => ({ ...d, seq });
const docChars = (d: StoredDoc): number =>
  d.id.length + d.from.length + d.subject.length + d.body.length + (d.to?.length ?? 0) + (d.url?.length ?? 0);

/** A queryable part of the index: a sealed shard or the hot shard. */
interface Part {
  shard: CompactShard;
  dead: ReadonlySet<number>;
}

export class MailSearch {
  private hot = new ShardBuilder();
  /** Live documents of the hot shard, and the ones replaced or removed since it was started. */
  private readonly hotLive = new Set<number>();
  private readonly hotDead = new Set<number>();
  private nextSeq = 0;
  private tombstones = new Map<number, Set<number>>();
  /** Sealed shards in memory; filled by the first search (writers never need them). */
  private loaded?: Map<number, CompactShard>;
  /** Whether the rest of the shards are being loaded after a searchSoon. */
  private loadingInBackground = false;
  private tail: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** Messages added but not yet written, by id (a later add of the same id replaces the queued one). */
  private readonly queue = new Map<string, StoredDoc>();
  private queuedChars = 0;
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  /** A failed write of queued messages, for the next add/addMany/flush/close to report. */
  private deferredError: unknown;

  /** @internal use openMailSearch */
  constructor(
    private readonly db: SearchDb,
    private readonly cipher: RecordCipher,
    private manifest: Manifest,
  ) {
    this.applyManifest(manifest);
  }

  /** @internal Rebuilds the hot shard from the stored documents past the sealed boundary. */
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

  /**
   * Adds or replaces (same id) one message. Write-behind: the message is
   * validated and queued, and every later query, has(), count() and remove()
   * sees it (they write the queue first); it is in IndexedDB after flush()
   * or close() resolves, or FLUSH_DELAY_MS after this add (QUEUE_CAP adds:
   * at once). A crash before then loses the queued messages only (each write
   * is atomic); has() is false for them, so re-indexing adds them again.
   * Rejects with the error of an earlier queued write that failed (those
   * messages are not indexed); this one is queued all the same.
   */
  add(doc: MailDoc): Promise<void> {
    let valid: StoredDoc;
    try {
      valid = validateDoc(doc, 0);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.run(async () => {
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
          if (!this.closed) void this.run(() => this.writeQueue()).catch(() => undefined);
        }, FLUSH_DELAY_MS);
      }
      this.throwDeferred();
    });
  }

  /**
   * Resolves once every message added before it is in IndexedDB. Rejects
   * with the error of a queued write that failed since the last flush (its
   * messages are not indexed: add them again).
   */
  flush(): Promise<void> {
    return this.run(async () => {
      await this.writeQueue();
      this.throwDeferred();
    });
  }

  /**
   * Adds or replaces many messages, in transactions of up to ADD_BATCH;
   * written (durable) when it resolves, with the queue of add() before them.
   * All messages are validated before anything is written. On a storage
   * error the batches already reported through onProgress stay indexed.
   */
  addMany(docs: readonly MailDoc[], onProgress?: (done: number, total: number) => void): Promise<void> {
    if (!Array.isArray(docs))
      return Promise.reject(new MailSearchError('bad-input', 'addMany expects an array of messages'));
    let valid: StoredDoc[];
    try {
      const byId = new Map<string, StoredDoc>();
      docs.forEach((d, i) => {
        const v = validateDoc(d, i);
        byId.delete(v.id); // the last version of a repeated id wins
        byId.set(v.id, v);
      });
      valid = [...byId.values()];
    } catch (err) {
      return Promise.reject(err);
    }
    return this.run(async () => {
      this.throwDeferred();
      await this.writeQueue();
      this.throwDeferred();
      await this.writeDocs(valid, onProgress);
    });
  }

  /** Writes documents in atomic batches of up to ADD_BATCH, sealing the hot shard when full. */
  private async writeDocs(valid: StoredDoc[], onProgress?: (done: number, total: number) => void): Promise<void> {
    let done = 0;
    while (done < valid.length) {
      await this.sealIfFull();
      const room = SHARD_SIZE - this.hot.size;
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
   * untouched) and is kept for the next add/flush; reads go on with what is stored.
   */
  private async writeQueue(): Promise<void> {
    if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
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
    }
  }

  private throwDeferred(): void {
    const err = this.deferredError;
    if (err === undefined) return;
    this.deferredError = undefined;
    throw err;
  }

  /** Removes a message; resolves false if it was not indexed. */
  remove(id: string): Promise<boolean> {
    if (typeof id !== 'string' || id.length === 0) {
      return Promise.reject(new MailSearchError('bad-input', 'remove expects a non-empty message id'));
    }
    return this.run(async () => {
      await this.writeQueue();
      const h = this.cipher.tag(id);
      const seq = await this.db.getKeyFromIndex('docs', 'h', h);
      if (seq === undefined) return false;
      const shard = this.manifest.shards.find((s) => s.lo <= seq && seq < s.hi);
      const next = shard ? this.withTombstones([seq]) : undefined;
      const nextRec = next && (await this.cipher.sealJson(MANIFEST_AAD, next));
      await writeAtomically(this.db, [
        ...(await this.dropDocs([seq])),
        ...(nextRec ? [{ store: 'meta', put: nextRec, key: 'manifest' } as const] : []),
      ]);
      if (next) this.applyManifest(next);
      else if (seq >= this.manifest.sealedUpTo) this.retireHot(seq);
      if (shard) await this.compactIfNeeded(shard.id);
      return true;
    });
  }

  /**
   * Keyword search, best first (or newest first). Terms are ANDed; lunr
   * syntax works (subject:word, -word, word*, word~1, word^2). A number as
   * second argument is the limit.
   */
  search(query: string, options: number | SearchOptions = {}): Promise<SearchHit[]> {
    let opts: ValidSearch;
    try {
      opts = validateSearch(query, typeof options === 'number' ? { limit: options } : options);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.run(async () => {
      await this.writeQueue();
      return this.doSearch(query, opts);
    });
  }

  /**
   * Like search, but answers at once from the part of the index already in
   * memory (loading at most LOAD_STEP more shards, newest first), and goes on
   * loading the rest in the background. `complete` says whether the whole
   * index was searched; if not, ask again for more. Scores of a partial answer
   * use the searched part's word frequencies.
   */
  searchSoon(query: string, options: SearchOptions = {}): Promise<{ hits: SearchHit[]; complete: boolean }> {
    let opts: ValidSearch;
    try {
      opts = validateSearch(query, options);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.run(async () => {
      await this.writeQueue();
      const hits = await this.doSearch(query, opts, true);
      const complete = this.isFullyLoaded();
      if (!complete) this.loadInBackground();
      return { hits, complete };
    });
  }

  /** Whether a message is indexed (one lookup by its id's tag). */
  has(id: string): Promise<boolean> {
    if (typeof id !== 'string' || id.length === 0) {
      return Promise.reject(new MailSearchError('bad-input', 'has expects a non-empty message id'));
    }
    // A queued message will be written (or the failure reported): no need to write the queue.
    return this.run(
      async () => this.queue.has(id) || (await this.db.getKeyFromIndex('docs', 'h', this.cipher.tag(id))) !== undefined,
    );
  }

  /**
   * The subjects of the indexed messages among `ids` (the others are left
   * out): a webmail list that shows only "..." for encrypted mail shows the
   * protected subject from here. One lookup and one decryption per message.
   */
  subjects(ids: readonly string[]): Promise<Map<string, string>> {
    return this.run(async () => {
      const out = new Map<string, string>();
      const rows: [number, DocRecord | undefined][] = [];
      for (const id of ids) {
        const queued = this.queue.get(id);
        if (queued) out.set(id, queued.subject);
        else {
          const seq = await this.db.getKeyFromIndex('docs', 'h', this.cipher.tag(id));
          if (typeof seq === 'number') rows.push([seq, await this.db.get('docs', seq)]);
        }
      }
      for (const d of await this.openDocs(rows)) out.set(d.id, d.subject);
      return out;
    });
  }

  /** Number of indexed messages. */
  count(): Promise<number> {
    return this.run(async () => {
      await this.writeQueue();
      let n = this.hotLive.size;
      for (const s of this.manifest.shards) n += s.docCount - s.tombstones.length;
      return n;
    });
  }

  /** Sizes and shape of the index (for the options page and the benchmark). */
  stats(): Promise<SearchStats> {
    return this.run(async () => {
      await this.writeQueue();
      const tx = this.db.transaction(['docs', 'chunks', 'shards', 'meta']);
      let indexBytes = 0;
      let docBytes = 0;
      for (let c = await tx.objectStore('shards').openCursor(); c; c = await c.continue())
        indexBytes += recordBytes(c.value);
      for (let c = await tx.objectStore('chunks').openCursor(); c; c = await c.continue())
        docBytes += recordBytes(c.value);
      for (let c = await tx.objectStore('docs').openCursor(); c; c = await c.continue())
        if ('ct' in c.value) docBytes += recordBytes(c.value); // a message stored alone (version 1)
      const manifestRec = await tx.objectStore('meta').get('manifest');
      if (manifestRec && 'ct' in manifestRec) indexBytes += recordBytes(manifestRec);
      let count = this.hotLive.size;
      let tombstones = this.hotDead.size;
      for (const s of this.manifest.shards) {
        count += s.docCount - s.tombstones.length;
        tombstones += s.tombstones.length;
      }
      return {
        count,
        sealedShards: this.manifest.shards.length,
        hotDocs: this.hotLive.size,
        tombstones,
        indexBytes,
        docBytes,
      };
    });
  }

  /**
   * Waits for pending operations, writes the queue, then closes the database.
   * Rejects, once closed, with the error of a queued write that failed.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    const flushed = this.flush();
    this.closed = true;
    await this.tail;
    if (this.flushTimer !== undefined) clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    this.loaded = undefined;
    this.db.close();
    await flushed;
  }

  // ---- internals ---------------------------------------------------------------

  /** Serializes operations: each sees the state left by the previous one. */
  private run<T>(op: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new MailSearchError('closed', 'The search index is closed'));
    const p = this.tail.then(op);
    this.tail = p.catch(() => undefined);
    return p;
  }

  private applyManifest(m: Manifest): void {
    this.manifest = m;
    this.tombstones = new Map(m.shards.map((s) => [s.id, new Set(s.tombstones)]));
  }

  private retireHot(seq: number): void {
    this.hotLive.delete(seq);
    this.hotDead.add(seq);
  }

  /** The manifest with these sealed sequence numbers tombstoned. */
  private withTombstones(seqs: number[]): Manifest {
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
  private async openDocs(rows: [number, DocRecord | undefined][]): Promise<StoredDoc[]> {
    const chunkKeys = new Set<number>();
    for (const [seq, rec] of rows) {
      if (!rec || typeof rec.h !== 'string' || ('c' in rec && !isInt(rec.c))) {
        throw new MailSearchError('integrity', `Search index record doc|${seq} is missing or malformed`);
      }
      if ('c' in rec) chunkKeys.add(rec.c);
    }
    const chunks = await this.readChunks([...chunkKeys]);
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

  /** Reads and decrypts chunks by key (one transaction; decryption in parallel). */
  private async readChunks(keys: number[]): Promise<Map<number, ChunkEntry[]>> {
    if (keys.length === 0) return new Map();
    const tx = this.db.transaction('chunks');
    const recs = await Promise.all(keys.map((k) => tx.store.get(k)));
    await tx.done;
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
  private async dropDocs(seqs: number[]): Promise<WriteOp[]> {
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

  private async writeBatch(batch: StoredDoc[]): Promise<void> {
    const seqs = batch.map((_, i) => this.nextSeq + i);
    const tags = batch.map((d) => this.cipher.tag(d.id));
    const prepared = batch.map((d, i) => this.hot.prepare(indexable(d, seqs[i])));
    const chunkAt = (i: number) => seqs[i - (i % CHUNK_DOCS)];
    const chunks = await Promise.all(
      seqs
        .filter((_, i) => i % CHUNK_DOCS === 0)
        .map(async (key, c) => {
          const entries = batch.slice(c * CHUNK_DOCS, (c + 1) * CHUNK_DOCS).map((d, k) => {
            const i = c * CHUNK_DOCS + k;
            return { seq: seqs[i], tag: tags[i], json: utf8.encode(JSON.stringify(d)) };
          });
          return { store: 'chunks', put: await this.cipher.seal(chunkAad(key), encodeChunk(entries)), key } as const;
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
    if (!(await writeNew(this.db, writes))) {
      const tx = this.db.transaction('docs');
      const olds = await Promise.all(tags.map((h) => tx.store.index('h').getKey(h)));
      await tx.done;
      replaced = olds.filter((o): o is number => o !== undefined);
      const sealed = replaced.filter((o) => o < this.manifest.sealedUpTo);
      next = sealed.length ? this.withTombstones(sealed) : undefined;
      const nextRec = next && (await this.cipher.sealJson(MANIFEST_AAD, next));
      await writeAtomically(this.db, [
        ...(await this.dropDocs(replaced)),
        ...writes,
        ...(nextRec ? [{ store: 'meta', put: nextRec, key: 'manifest' } as const] : []),
      ]);
    }
    // Committed: now (and only now) update the in-memory state.
    this.nextSeq += batch.length;
    for (const o of replaced) if (o >= this.manifest.sealedUpTo) this.retireHot(o);
    if (next) this.applyManifest(next);
    for (const p of prepared) {
      this.hot.add(p);
      this.hotLive.add(p.seq);
    }
  }

  /**
   * Seals a full hot shard. The messages are already stored, so a failed seal
   * (e.g. no space for the shard) fails nothing: it is retried at the next add,
   * and meanwhile the hot shard simply grows.
   */
  private async sealIfFull(): Promise<void> {
    if (this.hot.size < SHARD_SIZE) return;
    try {
      await this.seal();
    } catch (err) {
      if (!(err instanceof MailSearchError && (err.code === 'quota' || err.code === 'storage'))) throw err;
    }
  }

  /** Turns the hot shard into a sealed, stored shard. */
  private async seal(): Promise<void> {
    const id = this.manifest.nextShardId;
    const shard: ShardMeta = {
      id,
      lo: this.manifest.sealedUpTo,
      hi: this.nextSeq,
      docCount: this.hot.size,
      tombstones: [...this.hotDead],
    };
    const next: Manifest = { sealedUpTo: this.nextSeq, nextShardId: id + 1, shards: [...this.manifest.shards, shard] };
    const compact = this.hot.build();
    const shardRec = await this.cipher.sealBytes(shardAad(id), compact.serialize(), true);
    const nextRec = await this.cipher.sealJson(MANIFEST_AAD, next);
    await writeAtomically(this.db, [
      { store: 'shards', put: shardRec, key: id },
      { store: 'meta', put: nextRec, key: 'manifest' },
    ]);
    this.applyManifest(next);
    this.loaded?.set(id, compact);
    this.hot = new ShardBuilder();
    this.hotLive.clear();
    this.hotDead.clear();
  }

  /** Rebuilds a shard with many tombstones from its live documents, merged with small successors. */
  private async compactIfNeeded(shardId: number): Promise<void> {
    const shards = this.manifest.shards;
    const first = shards.findIndex((s) => s.id === shardId);
    const live = (s: ShardMeta) => s.docCount - s.tombstones.length;
    if (first < 0 || shards[first].tombstones.length <= COMPACT_RATIO * shards[first].docCount) return;
    let last = first;
    let total = live(shards[first]);
    while (last + 1 < shards.length && total + live(shards[last + 1]) <= SHARD_SIZE) total += live(shards[++last]);
    await this.rebuild(first, last);
  }

  /** Replaces shards first..last (manifest positions) by one built from their live stored messages. */
  private async rebuild(first: number, last: number): Promise<void> {
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
    const compact = builder.build();
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

  /**
   * Loads sealed shards not yet in memory, newest first, at most `max` of
   * them. A shard an older version stored as lunr JSON is rebuilt in the current form.
   */
  private async ensureLoaded(max = Infinity): Promise<Map<number, CompactShard>> {
    const loaded = (this.loaded ??= new Map());
    const missing = this.manifest.shards
      .filter((s) => !loaded.has(s.id))
      .reverse()
      .slice(0, max);
    if (missing.length === 0) return loaded;
    const tx = this.db.transaction('shards');
    const recs = await Promise.all(missing.map((s) => tx.store.get(s.id)));
    await tx.done;
    // Decrypting and gunzipping run off the main thread: all shards at once.
    const opened = await Promise.all(missing.map((s, i) => this.cipher.openBytes(shardAad(s.id), recs[i], true)));
    const legacy: number[] = [];
    opened.forEach((bytes, i) => {
      if (!CompactShard.recognizes(bytes)) return void legacy.push(missing[i].id);
      try {
        loaded.set(missing[i].id, CompactShard.deserialize(bytes));
      } catch {
        throw new MailSearchError('integrity', `Search index record ${shardAad(missing[i].id)} is not a valid index`);
      }
    });
    for (const id of legacy) {
      const at = this.manifest.shards.findIndex((s) => s.id === id);
      await this.rebuild(at, at);
    }
    return loaded;
  }

  /** Loads the remaining shards, LOAD_STEP at a time, each step queued like any operation. */
  private loadInBackground(): void {
    if (this.loadingInBackground) return;
    this.loadingInBackground = true;
    const step = async (): Promise<void> => {
      await this.ensureLoaded(LOAD_STEP);
      this.loadingInBackground = !this.closed && !this.isFullyLoaded();
      if (this.loadingInBackground) void this.run(step).catch(stop);
    };
    // A damaged shard stops it here; the next full search reports it.
    const stop = () => void (this.loadingInBackground = false);
    void this.run(step).catch(stop);
  }

  private isFullyLoaded(): boolean {
    return this.manifest.shards.every((s) => this.loaded?.has(s.id));
  }

  private async doSearch(
    query: string,
    { limit, sort, range, snippets }: ValidSearch,
    soon = false,
  ): Promise<SearchHit[]> {
    const clauses = parseQuery(query);
    if (clauses.length === 0) return [];
    const q = compileQuery(clauses);
    const loaded = await this.ensureLoaded(soon ? LOAD_STEP : Infinity);
    const parts: Part[] = this.manifest.shards
      .filter((s) => loaded.has(s.id))
      .map((s) => ({ shard: loaded.get(s.id)!, dead: this.tombstones.get(s.id)! }));
    if (this.hot.size > 0) parts.push({ shard: this.hot.forQuery(q), dead: this.hotDead });
    const expansions = parts.map((p) => p.shard.expand(q));

    // Global idf over the whole mailbox (lunr's formula, all shards' counts).
    const totalDocs = parts.reduce((n, p) => n + p.shard.docCount, 0);
    const df = new Map<string, number>();
    parts.forEach((p, i) => p.shard.addDfs(expansions[i], df));
    const globalIdf = new Map([...df].map(([term, n]) => [term, idf(n, totalDocs)]));

    // Newest shards first: sorting by date, older shards then rarely get past the kth hit.
    const top = new TopHits(limit, sort);
    for (let i = parts.length - 1; i >= 0; i--)
      parts[i].shard.run(q, expansions[i], globalIdf, parts[i].dead, range, i, top);

    // The words to highlight, one set for all hits: a hit's text holds a word
    // of it only if the hit's shard has that term, and then the shard's
    // expansion of the same clause has it too (a term's match does not depend on the shard).
    const terms = new Set<string>();
    q.clauses.forEach((c, k) => {
      if (c.presence !== PRESENCE.PROHIBITED) for (const e of expansions) for (const { term } of e[k]) terms.add(term);
    });
    const hits = top.best.map((s) => {
      const d = parts[s.part].shard.doc(s.local);
      const hit: SearchHit = {
        id: d.id,
        score: s.score,
        subject: d.subject,
        from: d.from,
        date: s.date,
        snippet: '',
        highlights: { subject: matchRanges(d.subject, terms), from: matchRanges(d.from, terms), snippet: [] },
      };
      if (d.to !== undefined) hit.to = d.to;
      if (d.url !== undefined) hit.url = d.url;
      return { hit, seq: s.seq };
    });
    if (snippets) await this.fillSnippets(hits, terms);
    return hits.map((h) => h.hit);
  }

  /** Snippets need the bodies: one stored message per hit, read and decrypted. */
  private async fillSnippets(hits: { hit: SearchHit; seq: number }[], terms: ReadonlySet<string>): Promise<void> {
    const tx = this.db.transaction('docs');
    const recs = await Promise.all(hits.map((h) => tx.store.get(h.seq)));
    await tx.done;
    const docs = await this.openDocs(hits.map((h, i) => [h.seq, recs[i]]));
    hits.forEach(({ hit }, i) => {
      const snippet = makeSnippet(docs[i].body, terms);
      hit.snippet = snippet.text;
      hit.highlights.snippet = snippet.ranges;
    });
  }
}
