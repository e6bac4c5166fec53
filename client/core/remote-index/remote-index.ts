// One device's view of the account's remote index (docs/remote-search.md):
// adding decrypted messages (Mitra updates committed with optimistic
// concurrency: each update names the version it was built on, and a device
// that lost the race syncs the deltas and builds it again), compacting the
// counters when the provider asks, and searching.
import * as openpgp from 'openpgp';
import { ADDR_BYTES, REQUEST_LIMITS, type SearchAnswer } from '../../../protocol/remote-search.js';
import { RemoteIndexApi, RemoteIndexError, type ApiOptions } from './api.js';
import { deriveKeys, open, sealedAs, tagOf, RemoteIndexIntegrityError, type RemoteKeys } from './keys.js';
import { parseRemoteQuery, type RemoteQuery } from './keywords.js';
import { decodeRecord, type DocRecord } from './record.js';
import { planSearch, rankAnswer, type SearchPlan } from './search.js';
import { bucketOf, Counters } from './state.js';
import { buildUpdate, KeywordKeys, type IndexDoc } from './update.js';
import { obtainSearchKey } from './wrap.js';

/** Attempts at one update before giving up (each lost race costs one round of sync and rebuild). */
const MAX_ATTEMPTS = 32;
/** Messages per update request. */
export const BATCH_DOCS = 128;

export interface RemoteHit extends DocRecord {
  tag: Uint8Array;
}

export interface AddResult {
  added: number;
  /** Indexed before (by this or another device): not sent. */
  skipped: number;
}

const hex = (b: Uint8Array): string => Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');

export class RemoteIndex {
  readonly counters = new Counters();
  private readonly kw: KeywordKeys;
  /** Serializes this device's writes: one update or compaction at a time. */
  private writing: Promise<unknown> = Promise.resolve();

  /**
   * Names this search key without revealing it (a keyed hash): what a device
   * files the version it has seen under, so that another key (the index
   * deleted and begun again) starts afresh.
   */
  readonly keyId: string;

  constructor(
    readonly api: RemoteIndexApi,
    private readonly keys: RemoteKeys,
  ) {
    this.kw = new KeywordKeys(keys);
    this.keyId = hex(tagOf(keys, 'pmf remote-index v1 key id'));
  }

  /** Opens the account's index with its search key, unwrapped (or first made) with the user's OpenPGP keys. */
  static async open(opts: ApiOptions & { privateKeys: openpgp.PrivateKey[] }): Promise<RemoteIndex> {
    const api = new RemoteIndexApi(opts);
    const searchKey = await obtainSearchKey(api, opts.privateKeys);
    try {
      return new RemoteIndex(api, await deriveKeys(searchKey));
    } finally {
      searchKey.fill(0);
    }
  }

  /**
   * Brings the counters up to the provider's version: every one (a device
   * that indexes needs them all), or only `buckets` more on a device that
   * searches.
   */
  async sync(buckets?: number[]): Promise<void> {
    const c = this.counters;
    const ask = buckets ?? (c.complete || c.version === 0 ? undefined : c.missing());
    await c.apply(this.keys, await this.api.state(c.version, ask));
  }

  /** The tags of these delivery ids (what the provider dedups by). */
  tags(deliveryIds: string[]): Uint8Array[] {
    return deliveryIds.map((id) => tagOf(this.keys, id));
  }

  async has(deliveryIds: string[]): Promise<boolean[]> {
    const out: boolean[] = [];
    for (let i = 0; i < deliveryIds.length; i += REQUEST_LIMITS.tagsPerRequest)
      out.push(...(await this.api.has(this.tags(deliveryIds.slice(i, i + REQUEST_LIMITS.tagsPerRequest)))));
    return out;
  }

  /**
   * Adds messages not yet indexed by any device (the provider refuses a tag
   * it holds), BATCH_DOCS to an update.
   */
  add(docs: IndexDoc[]): Promise<AddResult> {
    const run = this.writing.then(() => this.addNow(docs));
    this.writing = run.catch(() => undefined);
    return run;
  }

  private async addNow(docs: IndexDoc[]): Promise<AddResult> {
    const unique = new Map<string, IndexDoc>();
    for (const d of docs) unique.set(d.deliveryId, d);
    const all = [...unique.values()];
    const indexed = await this.has(all.map((d) => d.deliveryId));
    const pending = all.filter((_, i) => !indexed[i]);
    const result: AddResult = { added: 0, skipped: docs.length - pending.length };
    if (pending.length === 0) return result;
    await this.sync();
    for (let i = 0; i < pending.length; i += BATCH_DOCS) {
      const batch = pending.slice(i, i + BATCH_DOCS);
      const sent = await this.commit(batch);
      result.added += sent;
      result.skipped += batch.length - sent;
    }
    return result;
  }

  /** Commits one batch; returns how many of its messages it added (the rest another device added meanwhile). */
  private async commit(batch: IndexDoc[]): Promise<number> {
    let docs = batch;
    for (let attempt = 1; ; attempt++) {
      if (docs.length === 0) return 0;
      const built = await buildUpdate(this.keys, this.kw, this.counters, docs);
      let done: { version: number; compact: boolean };
      try {
        done = await this.api.update(built.body);
      } catch (e) {
        built.rollback();
        if (!(e instanceof RemoteIndexError) || attempt >= MAX_ATTEMPTS) throw e;
        docs = await this.recover(e, docs, attempt);
        continue;
      }
      this.counters.committed(done.version);
      // Asked for, not needed: a device that loses this race leaves it to the winner or a later update.
      if (done.compact)
        await this.compactNow().catch((e: unknown) => {
          if (!(e instanceof RemoteIndexError)) throw e;
        });
      return docs.length;
    }
  }

  /** After a refused update: what to send next (another device committed or holds some of it). */
  private async recover(e: RemoteIndexError, docs: IndexDoc[], attempt: number): Promise<IndexDoc[]> {
    if (e.code === 'duplicate') {
      const dup = new Set(e.detail.duplicates ?? []);
      docs = docs.filter((d) => !dup.has(hex(tagOf(this.keys, d.deliveryId))));
    } else if (e.code === 'compact_first') {
      await this.sync();
      await this.compactNow();
    } else if (e.code !== 'conflict') throw e;
    // Lost a race: wait a random while (the winner may be mid-run), then take its deltas and skip its messages.
    await new Promise((r) => setTimeout(r, Math.random() * Math.min(1000, 10 * 2 ** attempt)));
    await this.sync();
    const known = await this.has(docs.map((d) => d.deliveryId));
    return docs.filter((_, i) => !known[i]);
  }

  /** Replaces the deltas with a snapshot of every counter (the provider asks for one as deltas pile up). */
  compact(): Promise<void> {
    const run = this.writing.then(async () => {
      await this.sync();
      await this.compactNow();
    });
    this.writing = run.catch(() => undefined);
    return run;
  }

  private async compactNow(): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      const base = this.counters.version;
      const buckets = await this.counters.snapshot(this.keys, base + 1);
      try {
        const { version } = await this.api.compact({ baseVersion: base, buckets });
        this.counters.committed(version, true);
        return;
      } catch (e) {
        if (!(e instanceof RemoteIndexError) || e.code !== 'conflict' || attempt >= MAX_ATTEMPTS) throw e;
        await new Promise((r) => setTimeout(r, Math.random() * Math.min(1000, 10 * 2 ** attempt)));
        await this.sync();
      }
    }
  }

  /**
   * The newest `limit` messages matching the query, with their records, and
   * how many match in all. A device that has not synced fetches only the
   * snapshot buckets of the query's keywords and the deltas since.
   */
  async search(query: string | RemoteQuery, limit = 20): Promise<{ hits: RemoteHit[]; total: number }> {
    const q = typeof query === 'string' ? parseRemoteQuery(query) : query;
    await this.load([...q.required, ...q.excluded]);
    const plan = planSearch(this.kw, this.counters, q);
    const answer = await this.ask(plan);
    const { docs, total } = rankAnswer(this.keys, plan, answer, limit);
    const hits = await this.records(docs.map((d) => d.tag));
    hits.forEach((h, i) => {
      // The sort key is not authenticated on its own: its record (sealed with its tag) is.
      if (h.date !== docs[i].date)
        throw new RemoteIndexIntegrityError("a result's date differs from its sealed record");
    });
    return { hits, total };
  }

  /** Loads the counters a query needs: a complete device syncs; a searching one fetches the buckets it lacks. */
  private async load(words: string[]): Promise<void> {
    if (this.counters.complete) return this.sync();
    const lacking = new Set(
      words
        .map((w) => this.kw.get(w).slot)
        .filter((s) => !this.counters.knows(s))
        .map(bucketOf),
    );
    await this.sync([...lacking].sort((a, b) => a - b));
  }

  /** Sends the plan's addresses (in requests of at most the provider's bound) and joins the answers. */
  private async ask(plan: SearchPlan): Promise<SearchAnswer> {
    const per = REQUEST_LIMITS.searchAddresses;
    const total = plan.addrs.length / ADDR_BYTES;
    if (total <= per) return this.api.search(plan.addrs);
    const docs: SearchAnswer['docs'] = [];
    const index = new Map<string, number>();
    const hits = new Uint32Array(total);
    const checks = new Uint32Array(total);
    for (let start = 0; start < total; start += per) {
      const part = await this.api.search(
        plan.addrs.subarray(start * ADDR_BYTES, Math.min(total, start + per) * ADDR_BYTES),
      );
      const local = part.docs.map((d) => {
        const key = hex(d.tag);
        let i = index.get(key);
        if (i === undefined) index.set(key, (i = docs.push(d) - 1));
        return i + 1;
      });
      part.hits.forEach((h, i) => (hits[start + i] = h === 0 ? 0 : local[h - 1]));
      checks.set(part.checks, start);
    }
    return { docs, hits, checks };
  }

  /** The opened records of these tags, in order; a record the provider lacks is an integrity error. */
  async records(tags: Uint8Array[]): Promise<RemoteHit[]> {
    const out: RemoteHit[] = [];
    for (let i = 0; i < tags.length; i += REQUEST_LIMITS.recordsPerRequest) {
      const part = tags.slice(i, i + REQUEST_LIMITS.recordsPerRequest);
      const sealed = await this.api.records(part);
      for (const [j, s] of sealed.entries()) {
        if (!s) throw new RemoteIndexIntegrityError('the provider named a result it has no record of');
        const record = decodeRecord(await open(this.keys, s, sealedAs('record', part[j])));
        out.push({ ...record, tag: part[j] });
      }
    }
    return out;
  }

  /** Removes messages from the index (their entries and records); how many were there. */
  async remove(deliveryIds: string[]): Promise<number> {
    let n = 0;
    for (let i = 0; i < deliveryIds.length; i += REQUEST_LIMITS.removePerRequest)
      n += await this.api.remove(this.tags(deliveryIds.slice(i, i + REQUEST_LIMITS.removePerRequest)));
    return n;
  }
}
