// The index's reader (lunr's index): loads sealed shards (lazily, newest
// first), runs a query over them and the hot shard with one global idf, and
// fills snippets from the stored messages of the hits.
import { t } from '../lib/i18n.js';
import { CompactShard, idf, type DateRange } from './compact-shard.js';
import { MailSearchError } from './errors.js';
import { compileQuery, parseQuery, PRESENCE } from './lunr-shard.js';
import type { StoredDoc } from './mail-doc.js';
import type { Schedule, ShardStore } from './shard-store.js';
import { makeSnippet, matchRanges, type Range } from './snippet.js';
import { shardAad } from './store.js';
import { TopHits } from './top-hits.js';

/** Shards loaded per step by searchSoon and the background loading it starts. */
const LOAD_STEP = 2;
const MAX_QUERY_CHARS = 1000;
const MAX_LIMIT = 1000;

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

export type ValidSearch = Required<Pick<SearchOptions, 'limit' | 'sort' | 'snippets'>> & { range?: DateRange };

export function validateSearch(query: unknown, o: SearchOptions): ValidSearch {
  if (typeof query !== 'string' || query.length > MAX_QUERY_CHARS) {
    throw new MailSearchError('bad-input', t('search_query_too_long', MAX_QUERY_CHARS));
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

/** A queryable part of the index: a sealed shard or the hot shard. */
interface Part {
  shard: CompactShard;
  dead: ReadonlySet<number>;
}

export class IndexReader {
  /** Whether the rest of the shards are being loaded after a searchSoon. */
  private loadingInBackground = false;

  constructor(
    private readonly store: ShardStore,
    private readonly schedule: Schedule,
  ) {}

  /**
   * Searches the shards in memory and the hot shard; `soon`: loading at most
   * LOAD_STEP more shards first (and the rest in the background), else all.
   */
  async search(query: string, opts: ValidSearch, soon = false): Promise<{ hits: SearchHit[]; complete: boolean }> {
    const hits = await this.doSearch(query, opts, soon);
    const complete = this.isFullyLoaded();
    if (soon && !complete) this.loadInBackground();
    return { hits, complete };
  }

  /**
   * Loads sealed shards not yet in memory, newest first, at most `max` of
   * them. A shard an older version stored as lunr JSON is rebuilt in the current form.
   */
  private async ensureLoaded(max = Infinity): Promise<Map<number, CompactShard>> {
    const store = this.store;
    const loaded = (store.loaded ??= new Map());
    const missing = store.manifest.shards
      .filter((s) => !loaded.has(s.id))
      .reverse()
      .slice(0, max);
    if (missing.length === 0) return loaded;
    const tx = store.db.transaction('shards');
    const recs = await Promise.all(missing.map((s) => tx.store.get(s.id)));
    await tx.done;
    // Decrypting and gunzipping run off the main thread: all shards at once.
    const opened = await Promise.all(missing.map((s, i) => store.cipher.openBytes(shardAad(s.id), recs[i], true)));
    const legacy: number[] = [];
    opened.forEach((bytes, i) => {
      if (!CompactShard.recognizes(bytes)) return void legacy.push(missing[i].id);
      try {
        loaded.set(missing[i].id, CompactShard.deserialize(bytes));
      } catch {
        throw new MailSearchError('integrity', t('search_record_not_index', shardAad(missing[i].id)));
      }
    });
    for (const id of legacy) {
      const at = store.manifest.shards.findIndex((s) => s.id === id);
      await store.rebuild(at, at);
    }
    return loaded;
  }

  /** Loads the remaining shards, LOAD_STEP at a time, each step queued like any operation. */
  private loadInBackground(): void {
    if (this.loadingInBackground) return;
    this.loadingInBackground = true;
    const step = async (): Promise<void> => {
      await this.ensureLoaded(LOAD_STEP);
      this.loadingInBackground = !this.isFullyLoaded(); // once closed, schedule refuses the next step
      if (this.loadingInBackground) void this.schedule(step).catch(stop);
    };
    // A damaged shard stops it here; the next full search reports it.
    const stop = () => void (this.loadingInBackground = false);
    void this.schedule(step).catch(stop);
  }

  /** Whether every sealed shard is in memory (a query then reads nothing from IndexedDB but snippets). */
  isFullyLoaded(): boolean {
    return this.store.manifest.shards.every((s) => this.store.loaded?.has(s.id));
  }

  private async doSearch(
    query: string,
    { limit, sort, range, snippets }: ValidSearch,
    soon: boolean,
  ): Promise<SearchHit[]> {
    const clauses = parseQuery(query);
    if (clauses.length === 0) return [];
    const q = compileQuery(clauses);
    const loaded = await this.ensureLoaded(soon ? LOAD_STEP : Infinity);
    const { manifest, tombstones, hot, hotDead, pending } = this.store;
    const parts: Part[] = manifest.shards
      .filter((s) => loaded.has(s.id))
      .map((s) => ({ shard: loaded.get(s.id)!, dead: tombstones.get(s.id)! }));
    if (hot.size > 0) parts.push({ shard: hot.forQuery(q), dead: hotDead });
    const pendingPart = pending.size > 0 ? parts.push(pending.forQuery(q)) - 1 : -1;
    const expansions = parts.map((p) => p.shard.expand(q));

    // Global idf over the whole mailbox (lunr's formula, all shards' counts).
    const totalDocs = parts.reduce((n, p) => n + p.shard.docCount, 0);
    const df = new Map<string, number>();
    parts.forEach((p, i) => p.shard.addDfs(expansions[i], df));
    const globalIdf = new Map([...df].map(([term, n]) => [term, idf(n, totalDocs)]));

    // Newest shards first: sorting by date, older shards then rarely get past the kth hit.
    // Room for the stored versions of pending messages, which are left out below.
    const top = new TopHits(limit + pending.size, sort);
    for (let i = parts.length - 1; i >= 0; i--)
      parts[i].shard.run(q, expansions[i], globalIdf, parts[i].dead, range, i, top);

    // The words to highlight, one set for all hits: a hit's text holds a word
    // of it only if the hit's shard has that term, and then the shard's
    // expansion of the same clause has it too (a term's match does not depend on the shard).
    const terms = new Set<string>();
    q.clauses.forEach((c, k) => {
      if (c.presence !== PRESENCE.PROHIBITED) for (const e of expansions) for (const { term } of e[k]) terms.add(term);
    });
    const hits: { hit: SearchHit; seq: number; pending?: StoredDoc }[] = [];
    for (const s of top.best) {
      if (hits.length === limit) break;
      const d = parts[s.part].shard.doc(s.local);
      if (s.part !== pendingPart && pending.hasId(d.id)) continue; // superseded by the pending version
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
      hits.push(s.part === pendingPart ? { hit, seq: s.seq, pending: pending.doc(s.seq) } : { hit, seq: s.seq });
    }
    if (snippets) await this.fillSnippets(hits, terms);
    return hits.map((h) => h.hit);
  }

  /**
   * Snippets need the bodies: one stored message per hit, read and decrypted
   * (a pending one's is in memory). One removed or replaced since the hits
   * were ranked gets no snippet.
   */
  private async fillSnippets(
    hits: { hit: SearchHit; seq: number; pending?: StoredDoc }[],
    terms: ReadonlySet<string>,
  ): Promise<void> {
    const stored = await this.store.readDocs(hits.filter((h) => !h.pending).map((h) => h.seq));
    let next = 0;
    hits.forEach(({ hit, pending }) => {
      const doc = pending ?? stored[next++];
      if (!doc) return;
      const snippet = makeSnippet(doc.body, terms);
      hit.snippet = snippet.text;
      hit.highlights.snippet = snippet.ranges;
    });
  }
}
