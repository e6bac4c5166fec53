// Local keyword search over decrypted mail: a sharded lunr index, encrypted at
// rest in IndexedDB. No network access here: the index never leaves the device.
//
// Scheme (costs measured in README.md):
// - New mail goes into a "hot" shard (shard-builder.ts) that only tokenizes
//   on add; a query weighs only its own terms there (forQuery).
// - When the hot shard reaches SHARD_SIZE documents it is sealed: its compact
//   query form (compact-shard.ts) is built in slices of the thread (slices.ts:
//   queries go on meanwhile, over the hot shard), serialized, gzip'd,
//   encrypted and stored as one record. Sealed shards are immutable and loaded only by the first
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
//
// This file opens the index and orders the operations; the state they share
// is in shard-store.ts, writing in index-writer.ts, querying in index-reader.ts.
import { t } from '../lib/i18n.js';
import { deleteDB } from 'idb';
import type { RecordCipher } from './crypto.js';
import { MailSearchError } from './errors.js';
import { checkKeySource, newIndexKeys, openIndexKeys, type KeySource } from './index-key.js';
import { IndexReader, validateSearch, type SearchHit, type SearchOptions, type ValidSearch } from './index-reader.js';
import { IndexWriter } from './index-writer.js';
import { validateDoc, validateDocs, type MailDoc, type StoredDoc } from './mail-doc.js';
import { isManifest, ShardStore, type Manifest } from './shard-store.js';
import {
  MANIFEST_AAD,
  openStore,
  recordBytes,
  writeAtomically,
  type DocRecord,
  type Header,
  type SearchDb,
} from './store.js';

export { MAX_BODY_CHARS, type MailDoc } from './mail-doc.js';
export { SHARD_SIZE } from './shard-store.js';
export { FLUSH_DELAY_MS, QUEUE_CAP } from './index-writer.js';
export type { SearchHit, SearchOptions } from './index-reader.js';

export const DEFAULT_DB_NAME = 'pmf-search';

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

/** Opens (creating if needed) the encrypted search index. */
export async function openMailSearch(opts: OpenOptions = {}): Promise<MailSearch> {
  checkKeySource(opts);
  const dbName = opts.dbName ?? DEFAULT_DB_NAME;
  const db = await openStore(dbName);
  try {
    const header = (await db.get('meta', 'header')) as Header | undefined;
    const { cipher, manifest } = header ? await unlock(db, header, opts) : await initialize(db, opts);
    const store = new ShardStore(db, cipher, manifest);
    await store.loadHot();
    return new MailSearch(store);
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
  if (!isManifest(manifest)) throw new MailSearchError('integrity', t('search_index_manifest_malformed'));
  if (migrated) {
    await writeAtomically(db, [
      { store: 'meta', put: migrated.header, key: 'header' },
      { store: 'meta', put: migrated.wrapped, key: 'keys' },
    ]);
  }
  return { cipher, manifest };
}

export class MailSearch {
  private readonly db: SearchDb;
  private readonly writer: IndexWriter;
  private readonly reader: IndexReader;
  private tail: Promise<unknown> = Promise.resolve();
  /**
   * Settles with the last operation that changes what a query finds, other
   * than add() (a query finds its message staged): addMany() and remove().
   */
  private ordered: Promise<unknown> = Promise.resolve();
  /** Queries running beside the queue (close() waits for them). */
  private readonly queries = new Set<Promise<unknown>>();
  private closed = false;

  /** @internal use openMailSearch */
  constructor(private readonly store: ShardStore) {
    this.db = store.db;
    const schedule = (op: () => Promise<void>) => this.run(op);
    this.writer = new IndexWriter(store, schedule);
    this.reader = new IndexReader(store, schedule);
  }

  /**
   * Adds or replaces (same id) one message. Write-behind: the message is
   * validated and queued, and every query, has(), count() and remove()
   * after it sees it (queries search the queue in memory, count() and remove()
   * write it first); it is in IndexedDB after flush()
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
    if (this.closed) return this.run(() => Promise.resolve()); // rejects
    this.writer.stage(valid);
    return this.run(() => this.writer.enqueue(valid));
  }

  /**
   * Resolves once every message added before it is in IndexedDB. Rejects
   * with the error of a queued write that failed since the last flush (its
   * messages are not indexed: add them again).
   */
  flush(): Promise<void> {
    return this.run(() => this.writer.flush());
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
      valid = validateDocs(docs);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.run(() => this.writer.addMany(valid, onProgress), true);
  }

  /** Removes a message; resolves false if it was not indexed. */
  remove(id: string): Promise<boolean> {
    if (typeof id !== 'string' || id.length === 0) {
      return Promise.reject(new MailSearchError('bad-input', 'remove expects a non-empty message id'));
    }
    return this.run(() => this.writer.remove(id), true);
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
    return this.query(() => this.reader.search(query, opts)).then((r) => r.hits);
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
    return this.query(() => this.reader.search(query, opts, true));
  }

  /** Whether a message is indexed (one lookup by its id's tag). */
  has(id: string): Promise<boolean> {
    if (typeof id !== 'string' || id.length === 0) {
      return Promise.reject(new MailSearchError('bad-input', 'has expects a non-empty message id'));
    }
    // A queued message will be written (or the failure reported): no need to write the queue.
    return this.run(
      async () =>
        this.writer.queued(id) !== undefined ||
        (await this.db.getKeyFromIndex('docs', 'h', this.store.cipher.tag(id))) !== undefined,
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
        const queued = this.writer.queued(id);
        if (queued) out.set(id, queued.subject);
        else {
          const seq = await this.db.getKeyFromIndex('docs', 'h', this.store.cipher.tag(id));
          if (typeof seq === 'number') rows.push([seq, await this.db.get('docs', seq)]);
        }
      }
      for (const d of await this.store.openDocs(rows)) out.set(d.id, d.subject);
      return out;
    });
  }

  /** Number of indexed messages. */
  count(): Promise<number> {
    return this.run(async () => {
      await this.writer.writeQueue();
      return this.store.counts().live;
    });
  }

  /** Sizes and shape of the index (for the options page and the benchmark). */
  stats(): Promise<SearchStats> {
    return this.run(async () => {
      await this.writer.writeQueue();
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
      const { live, dead } = this.store.counts();
      return {
        count: live,
        sealedShards: this.store.manifest.shards.length,
        hotDocs: this.store.hotLive.size,
        tombstones: dead,
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
    await Promise.all(this.queries);
    this.writer.stopTimer();
    this.store.loaded = undefined;
    this.db.close();
    await flushed;
  }

  /**
   * Runs a query. It never waits for the writer: added messages are searched
   * in memory (pending-shard.ts), not written first, and once every sealed
   * shard is loaded a query reads nothing but snippets, so it runs beside the
   * queue, after the addMany() and remove() calls before it. Loading
   * shards still takes its turn in the queue (a shard an older version stored
   * is rewritten then).
   */
  private query<T>(op: () => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new MailSearchError('closed', t('search_index_closed')));
    const p = this.ordered.then(() => {
      if (this.closed) throw new MailSearchError('closed', t('search_index_closed'));
      return this.reader.isFullyLoaded() ? op() : this.run(op);
    });
    const done = p.catch(() => undefined);
    this.queries.add(done);
    void done.then(() => this.queries.delete(done));
    return p;
  }

  /**
   * Serializes operations: each sees the state left by the previous one.
   * `ordered`: queries called after it wait for it too.
   */
  private run<T>(op: () => Promise<T>, ordered = false): Promise<T> {
    if (this.closed) return Promise.reject(new MailSearchError('closed', t('search_index_closed')));
    const p = this.tail.then(op);
    this.tail = p.catch(() => undefined);
    if (ordered) this.ordered = this.tail;
    return p;
  }
}
