// Builds a shard's compact index (compact-shard.ts) message by message. Terms
// come from lunr's tokenizer and pipeline, weights from lunr's BM25 formula
// (lunr 2.3.9 Builder#createFieldVectors, same operations in the same order,
// rounded to 1/1000 as lunr rounds), so a shard answers exactly as a lunr
// index of the same mail would. lunr.Builder itself is not used: its inverted
// index, one object per (term, field, document), was most of the cost of an add.
import { CompactShard, idf, WEIGHT_SCALE, type ShardArrays } from './compact-shard.js';
import { DocTable } from './doc-table.js';
import {
  accepts,
  fieldWords,
  FIELD_BOOST,
  FIELDS,
  type CompiledQuery,
  type FieldWords,
  type IndexableDoc,
  type WordEntry,
} from './lunr-shard.js';
import { finish, inSlices, type Steps } from './slices.js';
import { TermBytes, TermTable } from './term-table.js';

const F = FIELDS.length;
/** lunr's BM25 parameters. */
const K1 = 1.2;
const B = 0.75;
const MAX_WEIGHT = 0xffff;
const BOOSTS = FIELDS.map((field) => FIELD_BOOST[field]);
const fromUtf8 = new TextDecoder();
/** Documents between two steps of a build (Steps). */
const DOCS_PER_STEP = 64;

/** lunr's length normalization of a field: k1·(1−b+b·len/avg). */
const lengthNorm = (length: number, avgLength: number) => K1 * (1 - B + B * (length / avgLength));

/** lunr's weight: idf·(k1+1)·tf / (norm + tf), times the field's boost, rounded as lunr rounds (× WEIGHT_SCALE). */
function weight(idf: number, tf: number, norm: number, f: number): number {
  let score = (idf * ((K1 + 1) * tf)) / (norm + tf);
  score *= BOOSTS[f];
  return Math.min(MAX_WEIGHT, Math.round(score * WEIGHT_SCALE));
}

/**
 * A message's index terms counted per field, and its doc-table entry: all of
 * an add but the writing into the builder, so a writer can do it before the
 * message is stored (ShardBuilder.prepare), and add it only once it is.
 */
export interface PreparedDoc {
  seq: number;
  date: number;
  /** Per field: its distinct words (memo entries: each has one index term) and their counts. */
  fields: FieldWords[];
  /**
   * Per field and word: its term's id in the builder that prepared it (`builder`), -1 if
   * that builder had no id for it then. Read while the words were just tokenized: the add
   * reads them instead of the memo entries, which by then had often left the CPU caches.
   */
  ids: Int32Array[];
  builder: number;
  meta: Uint8Array;
}

/** Numbers builders, so a word entry's cached term id names the builder it belongs to. */
let builders = 0;

export class ShardBuilder {
  private readonly serial = ++builders;
  private readonly ids = new Map<string, number>();
  /** Per term id: the last (document, field) that counted it, and where (add's merging of words with one term). */
  private seenIn = new Int32Array(1024);
  private seenAt = new Int32Array(1024);
  private fieldsAdded = 0;
  private readonly terms = new TermBytes();
  private readonly seqs: number[] = [];
  private readonly dates: number[] = [];
  // Postings of all documents in flat arrays, in order of (document, field): the seal reads
  // them in one sequential pass, where typed arrays per document and field were scattered
  // over the heap (and cost two allocations each per add).
  /** Per posting: its term id and its frequency in the field. */
  private postIds = new Int32Array(1 << 16);
  private postTfs = new Int32Array(1 << 16);
  private postings = 0;
  /**
   * Each term's postings as a chain, newest first: lastPosting[term] and
   * prevPosting[posting] hold a posting's index + 1 (0 ends it). A query
   * walks its terms' chains (forQuery) instead of every posting.
   */
  private lastPosting = new Int32Array(1024);
  private prevPosting = new Int32Array(1 << 16);
  /** Per (document, field), at document·F + field: where its postings end, and its length in terms. */
  private fieldEnds = new Int32Array(1024 * F);
  private lengths = new Int32Array(1024 * F);
  /** Per field: the sum of its lengths over all documents (integers: the same in any order). */
  private readonly totalLength = new Array<number>(F).fill(0);
  private readonly metas: Uint8Array[] = [];
  private built?: CompactShard;
  /** Whether buildInSlices is running (no add then: it reads the builder's arrays as they are). */
  private building = false;
  /** The documents' columns as the compact form takes them (cached until the next add, like `built`). */
  private columns?: Pick<ShardArrays, 'seqs' | 'dates' | 'meta'>;

  /** Tokenizes and counts one message; changes nothing in the builder. */
  prepare(doc: IndexableDoc): PreparedDoc {
    const fields = FIELDS.map((field) => fieldWords(doc, field));
    const ids = fields.map(({ words }) => {
      const known = new Int32Array(words.length);
      for (let w = 0; w < words.length; w++) known[w] = words[w].builder === this.serial ? words[w].local : -1;
      return known;
    });
    return { seq: doc.seq, date: doc.date, fields, ids, builder: this.serial, meta: DocTable.encode(doc) };
  }

  /** Adds a message, prepared or not (sequence numbers must increase). */
  add(doc: IndexableDoc | PreparedDoc): void {
    if (this.building) throw new Error('a shard builder takes no message while it builds');
    const p = 'fields' in doc ? doc : this.prepare(doc);
    const mine = p.builder === this.serial;
    const n = this.seqs.length;
    if (n > 0 && p.seq <= this.seqs[n - 1]) throw new Error('shard documents must be added in sequence order');
    if ((n + 1) * F > this.fieldEnds.length) {
      this.fieldEnds = grow(this.fieldEnds);
      this.lengths = grow(this.lengths);
    }
    for (let f = 0; f < F; f++) {
      const { words, tfs: counts, length } = p.fields[f];
      const known = mine ? p.ids[f] : undefined;
      while (this.postings + words.length > this.postIds.length) {
        this.postIds = grow(this.postIds);
        this.postTfs = grow(this.postTfs);
        this.prevPosting = grow(this.prevPosting);
      }
      // Distinct words can share a term ("launch", "launches"): their counts add up.
      const mark = ++this.fieldsAdded;
      let k = this.postings;
      for (let w = 0; w < words.length; w++) {
        let id = known ? known[w] : -1;
        if (id < 0) id = this.termId(words[w]);
        if (this.seenIn[id] === mark) {
          this.postTfs[this.seenAt[id]] += counts[w];
        } else {
          this.seenIn[id] = mark;
          this.seenAt[id] = k;
          this.postIds[k] = id;
          this.postTfs[k] = counts[w];
          this.prevPosting[k] = this.lastPosting[id];
          this.lastPosting[id] = ++k;
        }
      }
      this.postings = k;
      this.fieldEnds[n * F + f] = k;
      this.lengths[n * F + f] = length;
      this.totalLength[f] += length;
    }
    this.seqs.push(p.seq);
    this.dates.push(p.date);
    this.metas.push(p.meta);
    this.built = undefined;
    this.columns = undefined;
  }

  /** The id of a word's term in this builder, cached on the word's memo entry. */
  private termId(e: WordEntry): number {
    if (e.builder === this.serial) return e.local;
    const term = e.term!;
    let id = this.ids.get(term);
    if (id === undefined) {
      id = this.terms.count;
      this.ids.set(term, id);
      this.terms.add(term);
      if (id === this.seenIn.length) {
        this.seenIn = grow(this.seenIn);
        this.seenAt = grow(this.seenAt);
        this.lastPosting = grow(this.lastPosting);
      }
    }
    e.builder = this.serial;
    e.local = id;
    return id;
  }

  /** Documents added (lunr's document count). */
  get size(): number {
    return this.seqs.length;
  }

  /** The query form of everything added so far (cached until the next add). */
  build(): CompactShard {
    return (this.built ??= finish(this.compute()));
  }

  /**
   * build() in slices of the thread (slices.ts): queries meanwhile search
   * this builder as it is (forQuery), and no message may be added.
   */
  async buildInSlices(): Promise<CompactShard> {
    if (this.built) return this.built;
    this.building = true;
    try {
      return (this.built = await inSlices(this.compute()));
    } finally {
      this.building = false;
    }
  }

  /**
   * The query form for one query: only the terms its clauses reach, each
   * with the postings and weights build() gives it (same idf, lengths and
   * weight code). The hot shard gains a message at every add; a query then
   * walks its own terms' postings instead of weighing every term of up to
   * SHARD_SIZE messages.
   */
  forQuery(q: CompiledQuery): CompactShard {
    if (this.built) return this.built;
    const reached = new Map<string, number>();
    for (const c of q.clauses) {
      for (const p of c.patterns) {
        if (p.exact !== undefined) {
          const id = this.ids.get(p.exact);
          if (id !== undefined) reached.set(p.exact, id);
          continue;
        }
        const prefix = fromUtf8.decode(p.key);
        for (const [term, id] of this.ids) if (term.startsWith(prefix) && accepts(p.set!, term)) reached.set(term, id);
      }
    }
    const { table, order } = TermTable.sorted([...reached.keys()]);
    const ids = [...reached.values()];
    const N = this.seqs.length;
    const T = order.length;
    // Each term's postings, oldest first (so documents ascend), and the (document, field) of each.
    const postings = order.map((i) => this.postingsOf(ids[i]));
    const fields = postings.map((list) => list.map((k) => this.fieldOf(k)));
    const offsets = new Int32Array(T * F + 1);
    fields.forEach((list, r) => {
      for (const df of list) offsets[r * F + (df % F) + 1]++;
    });
    for (let i = 1; i < offsets.length; i++) offsets[i] += offsets[i - 1];
    const P = offsets[T * F];
    const docs = N <= 0x10000 ? new Uint16Array(P) : new Uint32Array(P);
    const weights = new Uint16Array(P);
    const fill = offsets.slice(0, T * F);
    const avgLength = this.totalLength.map((l) => l / N);
    postings.forEach((list, r) => {
      const termIdf = idf(list.length, N);
      list.forEach((k, j) => {
        const df = fields[r][j];
        const f = df % F;
        const at = fill[r * F + f]++;
        docs[at] = (df - f) / F;
        weights[at] = weight(termIdf, this.postTfs[k], lengthNorm(this.lengths[df], avgLength[f]), f);
      });
    });
    return this.shard(table, offsets, docs, weights);
  }

  /** A term's postings, oldest first. */
  private postingsOf(id: number): number[] {
    const list: number[] = [];
    for (let p = this.lastPosting[id]; p > 0; p = this.prevPosting[p - 1]) list.push(p - 1);
    return list.reverse();
  }

  /** The (document, field), as document·F + field, of posting k: the first whose postings end past k. */
  private fieldOf(k: number): number {
    let lo = 0;
    let hi = this.seqs.length * F - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.fieldEnds[mid] > k) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  private *compute(): Steps<CompactShard> {
    const N = this.seqs.length;
    const T = this.terms.count;
    const { postIds, postTfs, fieldEnds, lengths } = this;
    // Term ids in sorted order, which the compact form's lookups need.
    const { table, order } = yield* TermTable.sortedSteps(this.terms);
    const rank = new Int32Array(T);
    order.forEach((id, r) => (rank[id] = r));

    const offsets = new Int32Array(T * F + 1);
    for (let d = 0, k = 0; d < N; d++) {
      if (d % DOCS_PER_STEP === 0) yield;
      for (let f = 0; f < F; f++) {
        for (const end = fieldEnds[d * F + f]; k < end; k++) offsets[rank[postIds[k]] * F + f + 1]++;
      }
    }
    for (let i = 1; i < offsets.length; i++) offsets[i] += offsets[i - 1];
    const avgLength = this.totalLength.map((l) => l / N);
    const idfs = Float64Array.from(order, (_, r) => idf(offsets[r * F + F] - offsets[r * F], N));

    const P = offsets[T * F];
    const docs = N <= 0x10000 ? new Uint16Array(P) : new Uint32Array(P);
    const weights = new Uint16Array(P);
    const fill = offsets.slice(0, T * F);
    for (let d = 0, k = 0; d < N; d++) {
      if (d % DOCS_PER_STEP === 0) yield;
      for (let f = 0; f < F; f++) {
        const norm = lengthNorm(lengths[d * F + f], avgLength[f]);
        for (const end = fieldEnds[d * F + f]; k < end; k++) {
          const r = rank[postIds[k]];
          const at = fill[r * F + f]++;
          docs[at] = d;
          weights[at] = weight(idfs[r], postTfs[k], norm, f);
        }
      }
    }
    yield;
    return this.shard(table, offsets, docs, weights);
  }

  private shard(
    terms: TermTable,
    offsets: Int32Array,
    docs: Uint16Array | Uint32Array,
    weights: Uint16Array,
  ): CompactShard {
    this.columns ??= {
      seqs: Int32Array.from(this.seqs),
      dates: Float64Array.from(this.dates),
      meta: DocTable.join(this.metas),
    };
    return new CompactShard({ docCount: this.seqs.length, terms, offsets, docs, weights, ...this.columns });
  }
}

function grow(a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}
