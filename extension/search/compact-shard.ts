// A lunr index in compact, query-ready form. lunr builds the index and
// serializes it (toJSON); for querying, its object graph (one JS object per
// term·field·document) costs ~18 KB of heap and ~1 ms of load time per mail,
// too much at 40K mails. This form keeps exactly the information lunr scores
// with, the BM25 weight of every (term, field, document), in flat typed
// arrays (CSR layout), and evaluates lunr queries over it with lunr's
// semantics: required/prohibited clauses, field scoping, boosts, wildcard and
// fuzzy expansion.
import { accepts, FIELDS, PRESENCE, type CompiledQuery } from './lunr-shard.js';

const F = FIELDS.length;

/** lunr's BM25 idf from a document frequency and a document count. */
export function idf(df: number, documentCount: number): number {
  return Math.log(1 + Math.abs((documentCount - df + 0.5) / (df + 0.5)));
}

/** Field vectors as lunr keeps them: "field/ref" → [termIndex, weight, termIndex, weight, …]. */
export type FieldVectors = Iterable<[string, ArrayLike<number>]>;

/** Per clause of a query, the shard's term ids it expands to. */
export type Expansion = number[][];

export interface ShardHit {
  /** Document sequence number. */
  seq: number;
  score: number;
  local: number;
}

export class CompactShard {
  private sortedTerms?: string[];

  private readonly termIds = new Map<string, number>();

  private constructor(
    /** lunr's document count (the N of its idf), tombstoned documents included. */
    readonly docCount: number,
    /** Term of each term id (lunr's term index). */
    private readonly terms: string[],
    /** Sequence number of each local document id (ascending). */
    private readonly seqs: Int32Array,
    /** Postings of (term t, field f) are docs/weights[offsets[t*F+f] .. offsets[t*F+f+1]). */
    private readonly offsets: Int32Array,
    private readonly docs: Int32Array,
    private readonly weights: Float32Array,
  ) {
    terms.forEach((t, i) => this.termIds.set(t, i));
  }

  /**
   * Builds the compact form from lunr's term indices and field vectors.
   * `termOfIndex[i]` is the term whose lunr `_index` is i.
   */
  static from(termOfIndex: string[], vectors: FieldVectors, docCount: number): CompactShard {
    const fieldIndex = new Map<string, number>(FIELDS.map((f, i) => [f, i]));
    // Group vectors by document, documents in ascending sequence order.
    const byDoc = new Map<number, [number, ArrayLike<number>][]>();
    for (const [fieldRef, elements] of vectors) {
      const slash = fieldRef.indexOf('/');
      const f = fieldIndex.get(fieldRef.slice(0, slash));
      const seq = parseInt(fieldRef.slice(slash + 1), 36);
      if (f === undefined || !Number.isInteger(seq)) throw new Error('malformed field vector');
      let list = byDoc.get(seq);
      if (!list) byDoc.set(seq, (list = []));
      list.push([f, elements]);
    }
    const seqs = Int32Array.from([...byDoc.keys()].sort((a, b) => a - b));
    const T = termOfIndex.length;
    const counts = new Int32Array(T * F + 1);
    for (const list of byDoc.values()) {
      for (const [f, e] of list) {
        for (let i = 0; i < e.length; i += 2) {
          if (e[i] >= T) throw new Error('field vector term out of range');
          counts[e[i] * F + f + 1]++;
        }
      }
    }
    for (let i = 1; i < counts.length; i++) counts[i] += counts[i - 1];
    const offsets = counts;
    const fill = offsets.slice(0, T * F);
    const docs = new Int32Array(offsets[T * F]);
    const weights = new Float32Array(offsets[T * F]);
    seqs.forEach((seq, local) => {
      for (const [f, e] of byDoc.get(seq)!) {
        for (let i = 0; i < e.length; i += 2) {
          const at = fill[e[i] * F + f]++;
          docs[at] = local;
          weights[at] = e[i + 1];
        }
      }
    });
    return new CompactShard(docCount, termOfIndex, seqs, offsets, docs, weights);
  }

  /**
   * From the text of lunr's Index#toJSON. JSON.parse of the inverted index
   * builds one object per (term, field, document) only to be thrown away
   * (~100 ms per MB); the fast path scans it for (term, _index) pairs and
   * parses just the field vectors. Anything unexpected falls back to JSON.parse.
   */
  static fromLunrText(text: string, docCount: number): CompactShard {
    const fast = scanLunrText(text);
    if (fast) return CompactShard.from(fast.termOfIndex, fast.fieldVectors, docCount);
    return CompactShard.fromLunrJson(JSON.parse(text), docCount);
  }

  /** From the JSON lunr's Index#toJSON produced. */
  static fromLunrJson(json: unknown, docCount: number): CompactShard {
    const j = json as {
      fields?: string[];
      invertedIndex?: [string, { _index: number }][];
      fieldVectors?: [string, number[]][];
    };
    if (!j || !Array.isArray(j.invertedIndex) || !Array.isArray(j.fieldVectors) || j.fields?.join() !== FIELDS.join()) {
      throw new Error('not a serialized index of this version');
    }
    const termOfIndex: string[] = [];
    for (const [term, posting] of j.invertedIndex) termOfIndex[posting._index] = term;
    return CompactShard.from(termOfIndex, j.fieldVectors, docCount);
  }

  /** Document frequency of a term, counted like lunr.idf (once per field). */
  df(term: string): number {
    const t = this.termIds.get(term);
    return t === undefined ? 0 : this.offsets[t * F + F] - this.offsets[t * F];
  }

  /** The shard's terms matched by each clause of the query. */
  expand(q: CompiledQuery): Expansion {
    return q.clauses.map((c) =>
      c.patterns.flatMap((p) => {
        if (p.exact !== undefined) {
          const t = this.termIds.get(p.exact);
          return t === undefined ? [] : [t];
        }
        this.sortedTerms ??= [...this.termIds.keys()].sort();
        return this.sortedTerms.filter((term) => accepts(p.set!, term)).map((term) => this.termIds.get(term)!);
      }),
    );
  }

  /** The terms (strings) an expansion refers to. */
  termsOf(exp: Expansion): string[] {
    return exp.flat().map((t) => this.terms[t]);
  }

  /**
   * Documents matching the query, scored Σ boost · weight · idf_global/idf_shard,
   * where lunr's stored weight is idf_shard · tf_norm · fieldBoost: the
   * shard-local idf is swapped for the global one, so scores from different
   * shards are comparable (BM25 over the whole mailbox).
   */
  run(q: CompiledQuery, exp: Expansion, globalIdf: (term: string) => number, dead: ReadonlySet<number>): ShardHit[] {
    const idfRatio = (t: number) =>
      globalIdf(this.terms[t]) / idf(this.offsets[t * F + F] - this.offsets[t * F], this.docCount);
    const n = this.seqs.length;
    const score = new Float64Array(n);
    const hit = new Uint8Array(n);
    const requiredHits = new Uint16Array(n);
    const lastClause = new Int32Array(n).fill(-1);
    const prohibited = new Uint8Array(n);
    let required = 0;
    let positive = 0;
    for (let k = 0; k < q.clauses.length; k++) {
      const c = q.clauses[k];
      if (c.presence === PRESENCE.REQUIRED) {
        if (exp[k].length === 0) return []; // a required term absent from this shard
        required++;
      }
      if (c.presence !== PRESENCE.PROHIBITED) positive++;
      for (const t of exp[k]) {
        const ratio = c.presence === PRESENCE.PROHIBITED ? 0 : idfRatio(t);
        for (const f of c.fields) {
          for (let i = this.offsets[t * F + f], end = this.offsets[t * F + f + 1]; i < end; i++) {
            const d = this.docs[i];
            if (c.presence === PRESENCE.PROHIBITED) {
              prohibited[d] = 1;
              continue;
            }
            score[d] += c.boost * this.weights[i] * ratio;
            hit[d] = 1;
            if (c.presence === PRESENCE.REQUIRED && lastClause[d] !== k) {
              lastClause[d] = k;
              requiredHits[d]++;
            }
          }
        }
      }
    }
    const out: ShardHit[] = [];
    for (let d = 0; d < n; d++) {
      if ((positive > 0 && !hit[d]) || requiredHits[d] !== required || prohibited[d] || dead.has(this.seqs[d]))
        continue;
      out.push({ seq: this.seqs[d], score: score[d], local: d });
    }
    return out;
  }

  /** The expanded positive terms of the query that occur in a document (for highlighting). */
  matchedTerms(q: CompiledQuery, exp: Expansion, local: number): Set<string> {
    const out = new Set<string>();
    q.clauses.forEach((c, k) => {
      if (c.presence === PRESENCE.PROHIBITED) return;
      for (const t of exp[k]) {
        for (let f = 0; f < F; f++) {
          if (this.contains(this.offsets[t * F + f], this.offsets[t * F + f + 1], local)) {
            out.add(this.terms[t]);
            break;
          }
        }
      }
    });
    return out;
  }

  private contains(lo: number, hi: number, local: number): boolean {
    hi--;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const d = this.docs[mid];
      if (d === local) return true;
      if (d < local) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }
}

const VECTORS_KEY = '"fieldVectors":';
const INVERTED_KEY = ',"invertedIndex":';
const INDEX_KEY = '{"_index":';

/** End (exclusive) of the JSON string starting at text[i] === '"', or -1. */
function stringEnd(text: string, i: number): number {
  for (let j = i + 1; j < text.length; j++) {
    if (text[j] === '\\') j++;
    else if (text[j] === '"') return j + 1;
  }
  return -1;
}

/** (term, _index) pairs and field vectors out of lunr's JSON text, or undefined if it looks different. */
export function scanLunrText(text: string): { termOfIndex: string[]; fieldVectors: [string, number[]][] } | undefined {
  const v = text.indexOf(VECTORS_KEY);
  const inv = text.indexOf(INVERTED_KEY, v);
  if (v < 0 || inv < 0 || !text.startsWith(`{"version":`) || !text.includes(`"fields":${JSON.stringify(FIELDS)}`)) {
    return undefined;
  }
  try {
    const fieldVectors = JSON.parse(text.slice(v + VECTORS_KEY.length, inv)) as [string, number[]][];
    const termOfIndex: string[] = [];
    let i = inv + INVERTED_KEY.length;
    if (text[i++] !== '[') return undefined;
    while (text[i] === '[') {
      const end = stringEnd(text, i + 1);
      if (text[i + 1] !== '"' || end < 0 || !text.startsWith(INDEX_KEY, end + 1)) return undefined;
      // JSON.parse also copies the term: a slice would keep the whole text alive.
      const term = JSON.parse(text.slice(i + 1, end)) as string;
      let j = end + 1 + INDEX_KEY.length;
      const digits = /^\d+/.exec(text.slice(j, j + 12));
      if (!digits) return undefined;
      termOfIndex[Number(digits[0])] = term;
      // The posting ends at the first "}]": it holds only field names, base36
      // refs and empty metadata objects (no arrays, no strings with brackets).
      j = text.indexOf('}]', j + digits[0].length) + 1;
      if (j <= 0) return undefined;
      i = j + 1;
      if (text[i] === ',') i++;
    }
    if (text[i] !== ']' || !text.startsWith(',"pipeline":', i + 1)) return undefined;
    return { termOfIndex, fieldVectors };
  } catch {
    return undefined;
  }
}
