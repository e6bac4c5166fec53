// The sorted terms of a shard as one UTF-8 byte array ('\n'-separated, as
// stored), not one JS string per term: at 200K messages the shards hold
// millions of terms, which as strings took ~100 MB of heap for the garbage
// collector to walk at every pause. Terms sort by their UTF-8 bytes (code
// point order); lookups binary-search the bytes.
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder('utf-8', { fatal: true });
const NEWLINE = 0x0a;
const ABOVE_D7FF = /[\uD800-\uFFFF]/;

/** <0, 0, >0 as a sorts before, with, after b (bytewise). */
function compareBytes(a: Uint8Array, b: Uint8Array): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return a.length - b.length;
}

export class TermTable {
  /** Term i is bytes[starts[i], starts[i + 1] - 1). */
  private readonly starts: Int32Array;

  /** Terms never contain '\n': lunr's tokenizer splits on whitespace. */
  constructor(readonly bytes: Uint8Array) {
    let count = bytes.length ? 1 : 0;
    for (const b of bytes) if (b === NEWLINE) count++;
    this.starts = new Int32Array(count + 1);
    let k = 1;
    for (let i = 0; i < bytes.length; i++) if (bytes[i] === NEWLINE) this.starts[k++] = i + 1;
    this.starts[count] = bytes.length + 1;
  }

  /** The table of these terms, and for each rank the index of its term in `terms`. */
  static sorted(terms: string[]): { table: TermTable; order: number[] } {
    const encoded = terms.map((t) => utf8.encode(t));
    // JS string order (UTF-16 code units) is code point order unless a term has a unit
    // from U+D800 on (surrogates sort before U+E000..U+FFFF): then compare the bytes.
    // Comparing strings is what made sorting most of a seal's time.
    const order = terms.map((_, i) => i);
    if (terms.some((t) => ABOVE_D7FF.test(t))) order.sort((a, b) => compareBytes(encoded[a], encoded[b]));
    else order.sort((a, b) => (terms[a] < terms[b] ? -1 : terms[a] > terms[b] ? 1 : 0));
    const bytes = new Uint8Array(encoded.reduce((n, e) => n + e.length + 1, 0) - (terms.length ? 1 : 0));
    let at = 0;
    order.forEach((i, r) => {
      if (r > 0) bytes[at++] = NEWLINE;
      bytes.set(encoded[i], at);
      at += encoded[i].length;
    });
    return { table: new TermTable(bytes), order };
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
    let lo = 0;
    let hi = this.size;
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
