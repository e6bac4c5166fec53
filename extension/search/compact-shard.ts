// One shard of the index in compact, query-ready form: for every (term,
// field) the documents holding it and lunr's BM25 weight, in flat typed
// arrays (CSR layout), plus each document's date and what its result line
// shows (doc-table.ts). It evaluates lunr queries
// with lunr's semantics (required/prohibited clauses, field scoping, boosts,
// wildcard and fuzzy expansion), and is stored exactly as it sits in memory
// (serialize/deserialize): loading a shard is a decryption and a few typed-array
// views, not a parse. lunr's own object graph (one JS object per
// term·field·document) cost ~18 KB of heap and ~1 ms of load time per mail.
import { DocTable, type DocMeta } from './doc-table.js';
import { accepts, FIELDS, PRESENCE, type CompiledQuery } from './lunr-shard.js';
import { TermTable } from './term-table.js';
import type { TopHits } from './top-hits.js';

const F = FIELDS.length;

/** lunr's BM25 idf from a document frequency and a document count. */
export function idf(df: number, documentCount: number): number {
  return Math.log(1 + Math.abs((documentCount - df + 0.5) / (df + 0.5)));
}

/**
 * Weights are stored as lunr stores them, rounded to 1/1000, as integers:
 * exact, and half the size of a float. lunr's weights stay far below 65.535
 * (idf < 15 for any shard under a million mails, times ≤ 2.2 · field boost 2).
 */
export const WEIGHT_SCALE = 1000;

/** Per clause of a query, the shard's terms it expands to (id and text, so neither is looked up again). */
export type Expansion = { id: number; term: string }[][];

/** Only documents dated from..to (inclusive, ms since the epoch) are returned. */
export interface DateRange {
  from: number;
  to: number;
}

/** What a CompactShard is made of: sorted terms, postings per (term, field). */
export interface ShardArrays {
  docCount: number;
  terms: TermTable;
  seqs: Int32Array;
  dates: Float64Array;
  offsets: Int32Array;
  docs: Uint16Array | Uint32Array;
  weights: Uint16Array;
  meta: DocTable;
}

const MATCHED = 1;
const PROHIBITED = 2;

/**
 * Per-document scratch arrays for CompactShard#run, shared by all shards (run
 * is synchronous, so one query at a time) and left clean after each run: a
 * query over hundreds of shards allocates nothing per shard and visits only
 * the documents its terms reach.
 */
let scratchArrays = {
  score: new Float64Array(0),
  flags: new Uint8Array(0),
  requiredHits: new Uint16Array(0),
  lastClause: new Int32Array(0),
  /** The documents reached, first `count` entries. */
  touched: new Int32Array(0),
};
function scratch(n: number): typeof scratchArrays {
  if (scratchArrays.score.length < n) {
    scratchArrays = {
      score: new Float64Array(n),
      flags: new Uint8Array(n),
      requiredHits: new Uint16Array(n),
      lastClause: new Int32Array(n).fill(-1),
      touched: new Int32Array(n),
    };
  }
  return scratchArrays;
}

/** "PMS3" little-endian; "PMS2" shards (no doc table) are rebuilt like lunr JSON ones. */
const MAGIC = 0x33534d50;
const HEADER_BYTES = 32;

export class CompactShard {
  /** Oldest and newest document date, to skip a shard outside a date filter. */
  readonly minDate: number;
  readonly maxDate: number;

  constructor(private readonly a: ShardArrays) {
    let lo = Infinity;
    let hi = -Infinity;
    for (const d of a.dates) {
      if (d < lo) lo = d;
      if (d > hi) hi = d;
    }
    this.minDate = lo;
    this.maxDate = hi;
  }

  /** lunr's document count (the N of its idf), tombstoned documents included. */
  get docCount(): number {
    return this.a.docCount;
  }

  /** What the result line of document `local` shows. */
  doc(local: number): DocMeta {
    return this.a.meta.get(local);
  }

  /** The shard as bytes: a header, then the typed arrays, then the terms and the doc table. */
  serialize(): Uint8Array<ArrayBuffer> {
    const { seqs, dates, offsets, docs, weights, terms, meta } = this.a;
    const termBytes = terms.bytes;
    const parts: ArrayBufferView[] = [dates, seqs, meta.offsets, offsets, docs, weights, termBytes, meta.bytes];
    const out = new Uint8Array(HEADER_BYTES + parts.reduce((n, p) => n + p.byteLength, 0));
    new Uint32Array(out.buffer, 0, HEADER_BYTES / 4).set([
      MAGIC,
      this.a.docCount,
      seqs.length,
      terms.size,
      weights.length,
      docs.BYTES_PER_ELEMENT,
      termBytes.length,
      meta.bytes.length,
    ]);
    let at = HEADER_BYTES;
    for (const p of parts) {
      out.set(new Uint8Array(p.buffer, p.byteOffset, p.byteLength), at);
      at += p.byteLength;
    }
    return out;
  }

  /** Whether bytes start like a serialized shard (older indexes stored lunr JSON). */
  static recognizes(bytes: Uint8Array): boolean {
    return (
      bytes.byteLength >= HEADER_BYTES && new DataView(bytes.buffer, bytes.byteOffset).getUint32(0, true) === MAGIC
    );
  }

  /** Views over the bytes (no copy); throws on anything inconsistent. */
  static deserialize(bytes: Uint8Array<ArrayBuffer>): CompactShard {
    if (!CompactShard.recognizes(bytes) || bytes.byteOffset % 8 !== 0) throw new Error('not a serialized shard');
    const [, docCount, n, T, P, docWidth, termLength, metaLength] = new Uint32Array(bytes.buffer, bytes.byteOffset, 8);
    if (docWidth !== 2 && docWidth !== 4) throw new Error('bad document width');
    const need = HEADER_BYTES + n * 16 + 4 + (T * F + 1) * 4 + P * (docWidth + 2) + termLength + metaLength;
    if (need !== bytes.byteLength) throw new Error('bad shard length');
    let at = bytes.byteOffset + HEADER_BYTES;
    const take = <A>(make: (buf: ArrayBuffer, at: number, len: number) => A, len: number, width: number): A => {
      const view = make(bytes.buffer, at, len);
      at += len * width;
      return view;
    };
    const dates = take((b, o, l) => new Float64Array(b, o, l), n, 8);
    const seqs = take((b, o, l) => new Int32Array(b, o, l), n, 4);
    const metaOffsets = take((b, o, l) => new Int32Array(b, o, l), n + 1, 4);
    const offsets = take((b, o, l) => new Int32Array(b, o, l), T * F + 1, 4);
    const docs =
      docWidth === 2
        ? take((b, o, l) => new Uint16Array(b, o, l), P, 2)
        : take((b, o, l) => new Uint32Array(b, o, l), P, 4);
    const weights = take((b, o, l) => new Uint16Array(b, o, l), P, 2);
    const terms = new TermTable(take((b, o, l) => new Uint8Array(b, o, l), termLength, 1));
    const meta = new DocTable(metaOffsets, new Uint8Array(bytes.buffer, at, metaLength));
    if (terms.size !== T || offsets[T * F] !== P || metaOffsets[n] !== metaLength)
      throw new Error('inconsistent shard');
    return new CompactShard({ docCount, terms, seqs, dates, offsets, docs, weights, meta });
  }

  private dfOf(t: number): number {
    return this.a.offsets[t * F + F] - this.a.offsets[t * F];
  }

  /** Whether any document is dated inside the range. */
  overlaps(range: DateRange | undefined): boolean {
    return !range || (this.maxDate >= range.from && this.minDate <= range.to);
  }

  /** The shard's terms matched by each clause of the query. */
  expand(q: CompiledQuery): Expansion {
    const terms = this.a.terms;
    // Plain loops: this runs for every shard of every query.
    const exp: Expansion = [];
    for (const c of q.clauses) {
      const found: { id: number; term: string }[] = [];
      for (const p of c.patterns) {
        if (p.exact !== undefined) {
          const id = terms.find(p.key);
          if (id >= 0) found.push({ id, term: p.exact });
          continue;
        }
        // Only terms starting with the pattern's literal prefix can match: a sorted range.
        const { from, to } = terms.withPrefix(p.key);
        for (let id = from; id < to; id++) {
          const term = terms.term(id);
          if (accepts(p.set!, term)) found.push({ id, term });
        }
      }
      exp.push(found);
    }
    return exp;
  }

  /** Adds to `df` the document frequency (counted like lunr.idf, once per field) of each term of an expansion. */
  addDfs(exp: Expansion, df: Map<string, number>): void {
    const seen = new Set<number>();
    for (const clause of exp) {
      for (const { id, term } of clause) {
        if (seen.has(id)) continue; // a term in two clauses counts once
        seen.add(id);
        df.set(term, (df.get(term) ?? 0) + this.dfOf(id));
      }
    }
  }

  /**
   * Offers `top` the documents matching the query (and dated inside `range`),
   * scored Σ boost · weight · idf_global/idf_shard, where lunr's stored weight
   * is idf_shard · tf_norm · fieldBoost: the shard-local idf is swapped for
   * the global one, so scores from different shards are comparable (BM25
   * over the whole mailbox). Hits carry `part`, so results merged from many
   * shards still know theirs. `globalIdf` is a map, not a function: a new
   * closure per query made V8 throw away this function's optimized code.
   */
  run(
    q: CompiledQuery,
    exp: Expansion,
    globalIdf: ReadonlyMap<string, number>,
    dead: ReadonlySet<number>,
    range: DateRange | undefined,
    part: number,
    top: TopHits,
  ): void {
    const { seqs, dates, offsets, docs, weights, docCount } = this.a;
    if (!this.overlaps(range)) return;
    const n = seqs.length;
    // A required term absent from this shard: nothing here can match.
    for (let k = 0; k < q.clauses.length; k++) {
      if (q.clauses[k].presence === PRESENCE.REQUIRED && exp[k].length === 0) return;
    }
    const { score, flags, requiredHits, lastClause, touched } = scratch(n);
    let reached = 0;
    let required = 0;
    let positive = 0;
    for (let k = 0; k < q.clauses.length; k++) {
      const c = q.clauses[k];
      const isProhibited = c.presence === PRESENCE.PROHIBITED;
      if (c.presence === PRESENCE.REQUIRED) required++;
      if (!isProhibited) positive++;
      for (const { id: t, term } of exp[k]) {
        const factor = isProhibited ? 0 : (c.boost * globalIdf.get(term)!) / idf(this.dfOf(t), docCount) / WEIGHT_SCALE;
        for (const f of c.fields) {
          for (let i = offsets[t * F + f], end = offsets[t * F + f + 1]; i < end; i++) {
            const d = docs[i];
            if (flags[d] === 0) touched[reached++] = d;
            if (isProhibited) {
              flags[d] |= PROHIBITED;
              continue;
            }
            flags[d] |= MATCHED;
            score[d] += weights[i] * factor;
            if (c.presence === PRESENCE.REQUIRED && lastClause[d] !== k) {
              lastClause[d] = k;
              requiredHits[d]++;
            }
          }
        }
      }
    }
    // Only documents a positive clause reached can match; with none (only -terms), all can.
    const candidates = positive > 0 ? reached : n;
    for (let j = 0; j < candidates; j++) {
      const d = positive > 0 ? touched[j] : j;
      if ((positive > 0 && !(flags[d] & MATCHED)) || requiredHits[d] !== required || flags[d] & PROHIBITED) continue;
      if ((dead.size > 0 && dead.has(seqs[d])) || (range && (dates[d] < range.from || dates[d] > range.to))) continue;
      top.offer(seqs[d], score[d], dates[d], d, part);
    }
    for (let j = 0; j < reached; j++) {
      const d = touched[j];
      score[d] = 0;
      flags[d] = 0;
      requiredHits[d] = 0;
      lastClause[d] = -1;
    }
  }
}
