// The sorted terms of a shard as one UTF-8 byte array ('\n'-separated, as
// stored), not one JS string per term: at 200K messages the shards hold
// millions of terms, which as strings took ~100 MB of heap for the garbage
// collector to walk at every pause. Terms sort by their UTF-8 bytes (code
// point order); lookups binary-search the bytes.
import { finish, type Steps } from './slices.js';

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder('utf-8', { fatal: true });
const NEWLINE = 0x0a;

/** Terms are numbered below this in sortOrder's keys (a shard of 1,000 mails holds ~15,000). */
const MAX_KEYED_TERMS = 2 ** 21;
/** Leading bytes in sortOrder's keys: 4 × 8 bits and the term's number fit a double's 53 bits. */
const KEY_BYTES = 4;
/** Terms between two steps of sortOrder and TermTable.sortedSteps (Steps). */
const TERMS_PER_STEP = 2048;

/**
 * Terms as they are first met, each one's UTF-8 bytes appended to one buffer
 * (term i is bytes[starts[i], starts[i + 1])). A seal sorts them there: as
 * JS strings they lay scattered over the heap, and comparing them was most
 * of a seal's time, mostly waits for memory.
 */
export class TermBytes {
  bytes = new Uint8Array(1 << 16);
  starts = new Int32Array(1025);
  count = 0;

  add(term: string): void {
    const at = this.starts[this.count];
    if (at + 3 * term.length > this.bytes.length) {
      const bigger = new Uint8Array(Math.max(2 * this.bytes.length, at + 3 * term.length));
      bigger.set(this.bytes.subarray(0, at));
      this.bytes = bigger;
    }
    if (this.count + 2 > this.starts.length) {
      const bigger = new Int32Array(2 * this.starts.length);
      bigger.set(this.starts);
      this.starts = bigger;
    }
    this.starts[++this.count] = at + utf8.encodeInto(term, this.bytes.subarray(at)).written;
  }

  /** <0, 0, >0 as term a sorts before, with, after term b (bytewise: code point order). */
  compare(a: number, b: number): number {
    const { bytes, starts } = this;
    const i = starts[a];
    const j = starts[b];
    const m = starts[a + 1] - i;
    const n = starts[b + 1] - j;
    for (let k = 0; k < m && k < n; k++) if (bytes[i + k] !== bytes[j + k]) return bytes[i + k] - bytes[j + k];
    return m - n;
  }
}

/**
 * The term numbers in byte order. Sorted natively as numbers first, a key of
 * their first bytes (0 past the end: a key never orders two terms wrongly,
 * equal keys leave them to `compare`) and their number; then only runs of
 * equal keys are compared bytewise.
 */
function* sortOrder(terms: TermBytes): Steps<number[]> {
  const { bytes, starts, count: n } = terms;
  const compare = (a: number, b: number) => terms.compare(a, b);
  if (n >= MAX_KEYED_TERMS) return Array.from({ length: n }, (_, i) => i).sort(compare);
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    if (i % TERMS_PER_STEP === 0) yield;
    let key = 0;
    for (let k = starts[i]; k < starts[i] + KEY_BYTES; k++) key = key * 256 + (k < starts[i + 1] ? bytes[k] : 0);
    keys[i] = key * MAX_KEYED_TERMS + i;
  }
  yield;
  keys.sort();
  yield;
  const order = Array.from(keys, (k) => k % MAX_KEYED_TERMS);
  for (let start = 0, end = 1; end <= n; end++) {
    if (end % TERMS_PER_STEP === 0) yield;
    if (end < n && Math.floor(keys[end] / MAX_KEYED_TERMS) === Math.floor(keys[start] / MAX_KEYED_TERMS)) continue;
    if (end - start > 1)
      order
        .slice(start, end)
        .sort(compare)
        .forEach((i, k) => (order[start + k] = i));
    start = end;
  }
  return order;
}

/** Every SAMPLE_EVERY-th term's first bytes are kept apart (TermTable#samples). */
const SAMPLE_EVERY = 16;

/** The first 4 bytes of bytes[start, end) as a big-endian number, zero-padded: orders as the bytes do. */
function head4(bytes: Uint8Array, start: number, end: number): number {
  let h = 0;
  for (let k = 0; k < 4; k++) h = h * 256 + (start + k < end ? bytes[start + k] : 0);
  return h;
}

export class TermTable {
  /** Term i is bytes[starts[i], starts[i + 1] - 1). */
  private readonly starts: Int32Array;
  /**
   * head4 of every SAMPLE_EVERY-th term: a lookup first narrows its search
   * here, in a few KB, to the terms between two samples. A query looks up
   * its terms in every shard, and a binary search over the whole table cost
   * a cache miss or two per step in each (at 200K messages, about a third of
   * a query's time).
   */
  private readonly samples: Uint32Array;

  /** Terms never contain '\n': lunr's tokenizer splits on whitespace. */
  constructor(readonly bytes: Uint8Array) {
    let count = bytes.length ? 1 : 0;
    for (let i = 0; i < bytes.length; i++) if (bytes[i] === NEWLINE) count++;
    this.starts = new Int32Array(count + 1);
    let k = 1;
    for (let i = 0; i < bytes.length; i++) if (bytes[i] === NEWLINE) this.starts[k++] = i + 1;
    this.starts[count] = bytes.length + 1;
    this.samples = new Uint32Array(Math.ceil(count / SAMPLE_EVERY));
    for (let j = 0; j < this.samples.length; j++) {
      const t = j * SAMPLE_EVERY;
      this.samples[j] = head4(bytes, this.starts[t], this.starts[t + 1] - 1);
    }
  }

  /** The table of these terms, and for each rank the number of its term. */
  static sorted(terms: TermBytes | string[]): { table: TermTable; order: number[] } {
    if (Array.isArray(terms)) {
      const collected = new TermBytes();
      for (const t of terms) collected.add(t);
      return TermTable.sorted(collected);
    }
    return finish(TermTable.sortedSteps(terms));
  }

  /** TermTable.sorted in steps (slices.ts). */
  static *sortedSteps(terms: TermBytes): Steps<{ table: TermTable; order: number[] }> {
    const order = yield* sortOrder(terms);
    const { bytes, starts, count } = terms;
    const out = new Uint8Array(Math.max(0, starts[count] + count - 1));
    for (let r = 0, at = 0; r < count; r++) {
      if (r % TERMS_PER_STEP === 0) yield;
      if (r > 0) out[at++] = NEWLINE;
      for (let k = starts[order[r]]; k < starts[order[r] + 1]; k++) out[at++] = bytes[k];
    }
    return { table: new TermTable(out), order };
  }

  get size(): number {
    return this.starts.length - 1;
  }

  term(i: number): string {
    return fromUtf8.decode(this.bytes.subarray(this.starts[i], this.starts[i + 1] - 1));
  }

  /** Term i compared with `key` bytewise (no view allocated: lookups run per shard and query). */
  private compare(i: number, key: Uint8Array): number {
    const start = this.starts[i];
    const length = this.starts[i + 1] - 1 - start;
    const n = Math.min(length, key.length);
    for (let k = 0; k < n; k++) {
      const d = this.bytes[start + k] - key[k];
      if (d !== 0) return d;
    }
    return length - key.length;
  }

  /** Whether term i starts with `prefix`. */
  private startsWith(i: number, prefix: Uint8Array): boolean {
    const start = this.starts[i];
    if (this.starts[i + 1] - 1 - start < prefix.length) return false;
    for (let k = 0; k < prefix.length; k++) if (this.bytes[start + k] !== prefix[k]) return false;
    return true;
  }

  /** First term id whose term is ≥ `key`. */
  lowerBound(key: Uint8Array): number {
    // Samples whose head4 is below the key's are terms below the key, and above it, above:
    // only the terms after the last sample below and up to the first sample above are searched.
    const h = head4(key, 0, key.length);
    const { samples } = this;
    let a = 0;
    let b = samples.length;
    while (a < b) {
      const mid = (a + b) >> 1;
      if (samples[mid] < h) a = mid + 1;
      else b = mid;
    }
    let lo = a > 0 ? (a - 1) * SAMPLE_EVERY + 1 : 0;
    while (a < samples.length && samples[a] === h) a++;
    let hi = a < samples.length ? a * SAMPLE_EVERY : this.size;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.compare(mid, key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Term id of `term` (a string, or its UTF-8 bytes), or -1. */
  find(term: string | Uint8Array): number {
    const key = typeof term === 'string' ? utf8.encode(term) : term;
    const i = this.lowerBound(key);
    return i < this.size && this.compare(i, key) === 0 ? i : -1;
  }

  /** Term ids of the terms starting with `prefix`: a contiguous range. */
  withPrefix(prefix: string | Uint8Array): { from: number; to: number } {
    const key = typeof prefix === 'string' ? utf8.encode(prefix) : prefix;
    const from = this.lowerBound(key);
    let to = from;
    while (to < this.size && this.startsWith(to, key)) to++;
    return { from, to };
  }
}
