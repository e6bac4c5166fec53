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

/** Terms are numbered below this in sortOrder's keys (a shard of 1,000 mails holds ~40,000). */
const MAX_KEYED_TERMS = 2 ** 21;
/** Code units keyed by sortOrder, each as min(unit, 254) + 1 in 8 bits (0: past the end or after a unit from 254). */
const KEY_UNITS = 4;

/**
 * The indices of `terms` in `compare`'s order (code point order). Comparing
 * strings was most of a seal's time: terms are first sorted natively as
 * numbers, a key of their first code units and their index (order-preserving:
 * a unit from 254 on keys as 255 and ends the key), then only runs of equal keys are
 * compared as strings.
 */
function sortOrder(terms: string[], compare: (a: number, b: number) => number): number[] {
  const n = terms.length;
  if (n >= MAX_KEYED_TERMS) return terms.map((_, i) => i).sort(compare);
  const keys = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    const t = terms[i];
    let key = 0;
    let open = true; // past a unit from 254 on, the units that follow no longer order the terms
    for (let u = 0; u < KEY_UNITS; u++) {
      const unit: number = open && u < t.length ? Math.min(t.charCodeAt(u), 254) + 1 : 0;
      open = unit > 0 && unit < 255;
      key = key * 256 + unit;
    }
    keys[i] = key * MAX_KEYED_TERMS + i;
  }
  keys.sort();
  const order = Array.from(keys, (k) => k % MAX_KEYED_TERMS);
  for (let start = 0, end = 1; end <= n; end++) {
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

export class TermTable {
  /** Term i is bytes[starts[i], starts[i + 1] - 1). */
  private readonly starts: Int32Array;

  /** Terms never contain '\n': lunr's tokenizer splits on whitespace. */
  constructor(readonly bytes: Uint8Array) {
    let count = bytes.length ? 1 : 0;
    for (let i = 0; i < bytes.length; i++) if (bytes[i] === NEWLINE) count++;
    this.starts = new Int32Array(count + 1);
    let k = 1;
    for (let i = 0; i < bytes.length; i++) if (bytes[i] === NEWLINE) this.starts[k++] = i + 1;
    this.starts[count] = bytes.length + 1;
  }

  /** The table of these terms, and for each rank the index of its term in `terms`. */
  static sorted(terms: string[]): { table: TermTable; order: number[] } {
    // JS string order (UTF-16 code units) is code point order unless a term has a unit
    // from U+D800 on (surrogates sort before U+E000..U+FFFF): then compare the bytes.
    const encoded = terms.some((t) => ABOVE_D7FF.test(t)) ? terms.map((t) => utf8.encode(t)) : undefined;
    const order = sortOrder(
      terms,
      encoded
        ? (a, b) => compareBytes(encoded[a], encoded[b])
        : (a, b) => (terms[a] < terms[b] ? -1 : terms[a] > terms[b] ? 1 : 0),
    );
    // One encoding of the joined terms: a typed array per term cost more than the sort.
    return { table: new TermTable(utf8.encode(order.map((i) => terms[i]).join('\n'))), order };
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
