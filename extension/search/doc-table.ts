// What a result line shows of each message of a shard (id, subject, sender,
// recipient, link), kept inside the shard so a query renders its hits
// without reading and decrypting one stored message per hit, which was most
// of a query's time. One UTF-8 byte array (a JSON object per message) and
// offsets, not JS strings: at 200K messages strings would be ~1.6 million
// objects for the garbage collector to walk; only the hits shown are decoded.
const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder('utf-8', { fatal: true });

export interface DocMeta {
  id: string;
  subject: string;
  from: string;
  to?: string;
  url?: string;
}

export class DocTable {
  /** Message i is bytes[offsets[i], offsets[i + 1]). */
  constructor(
    readonly offsets: Int32Array,
    readonly bytes: Uint8Array,
  ) {}

  /** One message's entry (encoded once, when it is added to a shard). */
  static encode({ id, subject, from, to, url }: DocMeta): Uint8Array {
    return utf8.encode(JSON.stringify({ id, subject, from, to, url }));
  }

  /** The table of these entries, in order. */
  static join(encoded: readonly Uint8Array[]): DocTable {
    const offsets = new Int32Array(encoded.length + 1);
    encoded.forEach((e, i) => (offsets[i + 1] = offsets[i] + e.length));
    const bytes = new Uint8Array(offsets[encoded.length]);
    encoded.forEach((e, i) => bytes.set(e, offsets[i]));
    return new DocTable(offsets, bytes);
  }

  get size(): number {
    return this.offsets.length - 1;
  }

  get(i: number): DocMeta {
    return JSON.parse(fromUtf8.decode(this.bytes.subarray(this.offsets[i], this.offsets[i + 1]))) as DocMeta;
  }
}
