// Builds a shard's compact index (compact-shard.ts) message by message. Terms
// come from lunr's tokenizer and pipeline, weights from lunr's BM25 formula
// (lunr 2.3.9 Builder#createFieldVectors, same operations in the same order,
// rounded to 1/1000 as lunr rounds), so a shard answers exactly as a lunr
// index of the same mail would. lunr.Builder itself is not used: its inverted
// index, one object per (term, field, document), was most of the cost of an add.
import { CompactShard, idf, WEIGHT_SCALE } from './compact-shard.js';
import { DocTable } from './doc-table.js';
import { countFieldTerms, FIELD_BOOST, FIELDS, type IndexableDoc } from './lunr-shard.js';
import { TermTable } from './term-table.js';

const F = FIELDS.length;
/** lunr's BM25 parameters. */
const K1 = 1.2;
const B = 0.75;
const MAX_WEIGHT = 0xffff;

/**
 * A message's index terms counted per field, and its doc-table entry: all of
 * an add that does not depend on the shard, so a writer can do it while the
 * message is being encrypted (ShardBuilder.prepare), and add it only once stored.
 */
export interface PreparedDoc {
  seq: number;
  date: number;
  /** Number of terms in each field. */
  lengths: number[];
  /** Per field: term → term frequency. */
  counts: Map<string, number>[];
  meta: Uint8Array;
}

interface BuiltDoc {
  seq: number;
  date: number;
  lengths: number[];
  /** Per field: the term ids and their frequencies (parallel arrays). */
  ids: Int32Array[];
  tfs: Int32Array[];
}

export class ShardBuilder {
  private readonly ids = new Map<string, number>();
  private readonly terms: string[] = [];
  private readonly docs: BuiltDoc[] = [];
  private readonly metas: Uint8Array[] = [];
  private built?: CompactShard;

  /** Tokenizes and counts one message (no state touched). */
  static prepare(doc: IndexableDoc): PreparedDoc {
    const lengths: number[] = [];
    const counts = FIELDS.map((field) => {
      const tf = new Map<string, number>();
      lengths.push(countFieldTerms(doc, field, tf));
      return tf;
    });
    return { seq: doc.seq, date: doc.date, lengths, counts, meta: DocTable.encode(doc) };
  }

  /** Adds a message, prepared or not (sequence numbers must increase). */
  add(doc: IndexableDoc | PreparedDoc): void {
    const p = 'counts' in doc ? doc : ShardBuilder.prepare(doc);
    const last = this.docs.at(-1);
    if (last && p.seq <= last.seq) throw new Error('shard documents must be added in sequence order');
    const ids: Int32Array[] = [];
    const tfs: Int32Array[] = [];
    for (const counts of p.counts) {
      const fieldIds = new Int32Array(counts.size);
      const fieldTfs = new Int32Array(counts.size);
      let k = 0;
      for (const [w, tf] of counts) {
        let id = this.ids.get(w);
        if (id === undefined) {
          id = this.terms.length;
          this.ids.set(w, id);
          this.terms.push(w);
        }
        fieldIds[k] = id;
        fieldTfs[k++] = tf;
      }
      ids.push(fieldIds);
      tfs.push(fieldTfs);
    }
    this.docs.push({ seq: p.seq, date: p.date, lengths: p.lengths, ids, tfs });
    this.metas.push(p.meta);
    this.built = undefined;
  }

  /** Documents added (lunr's document count). */
  get size(): number {
    return this.docs.length;
  }

  /** The query form of everything added so far (cached until the next add). */
  build(): CompactShard {
    return (this.built ??= this.compute());
  }

  private compute(): CompactShard {
    const N = this.docs.length;
    const T = this.terms.length;
    // Term ids in sorted order, which the compact form's lookups need.
    const { table, order } = TermTable.sorted(this.terms);
    const rank = new Int32Array(T);
    order.forEach((id, r) => (rank[id] = r));

    const offsets = new Int32Array(T * F + 1);
    const totalLength = new Array<number>(F).fill(0);
    for (const d of this.docs) {
      for (let f = 0; f < F; f++) {
        totalLength[f] += d.lengths[f];
        for (const id of d.ids[f]) offsets[rank[id] * F + f + 1]++;
      }
    }
    for (let i = 1; i < offsets.length; i++) offsets[i] += offsets[i - 1];
    const avgLength = totalLength.map((l) => l / N);
    const idfs = Float64Array.from(order, (_, r) => idf(offsets[r * F + F] - offsets[r * F], N));

    const P = offsets[T * F];
    const docs = N <= 0x10000 ? new Uint16Array(P) : new Uint32Array(P);
    const weights = new Uint16Array(P);
    const fill = offsets.slice(0, T * F);
    this.docs.forEach((d, local) => {
      for (let f = 0; f < F; f++) {
        const norm = K1 * (1 - B + B * (d.lengths[f] / avgLength[f]));
        const ids = d.ids[f];
        for (let k = 0; k < ids.length; k++) {
          const r = rank[ids[k]];
          const tf = d.tfs[f][k];
          // lunr: score = idf·(k1+1)·tf / (k1·(1−b+b·len/avg) + tf), times field boost, rounded.
          let score = (idfs[r] * ((K1 + 1) * tf)) / (norm + tf);
          score *= FIELD_BOOST[FIELDS[f]];
          const at = fill[r * F + f]++;
          docs[at] = local;
          weights[at] = Math.min(MAX_WEIGHT, Math.round(score * WEIGHT_SCALE));
        }
      }
    });
    return new CompactShard({
      docCount: N,
      terms: table,
      seqs: Int32Array.from(this.docs, (d) => d.seq),
      dates: Float64Array.from(this.docs, (d) => d.date),
      offsets,
      docs,
      weights,
      meta: DocTable.join(this.metas),
    });
  }
}
