// The remote search index (docs/remote-search.md): the sizes every party
// agrees on and the byte layouts of the HTTP bodies between the client and
// provider-server's /remote-index endpoints. Both sides decode with the same
// bounded reader: every count and length is checked against its bound and
// against the bytes present before anything is sliced or allocated.
//
// All integers are big-endian. A "tag" is the 16-byte keyed hash of a
// message's delivery id (the provider dedups by it and never sees the id).

/** Bytes of an entry's address (a keyword PRF output). */
export const ADDR_BYTES = 16;
/** Bytes of an entry's check (keys.ts: its address's PRF output XOR a pad of its document), so a device can tell a forged result. */
export const CHECK_BYTES = 4;
/** Bytes of a document tag. */
export const TAG_BYTES = 16;
/** Bytes of a document's encrypted sort key (its date, XOR a keyed pad). */
export const SORT_BYTES = 8;
/** A sealed document record: 12-byte nonce, plaintext, 16-byte GCM tag (AES-256-GCM). */
export const RECORD_PLAIN_BYTES = 740;
export const SEAL_OVERHEAD = 28;
export const RECORD_BYTES = RECORD_PLAIN_BYTES + SEAL_OVERHEAD;

/** Keyword slots: each keeps one counter, shared by the keywords that hash to it. */
export const SLOTS = 1 << 18;
/** The snapshot of the counters is sealed in this many buckets, so a search fetches only its keywords' buckets. */
export const BUCKETS = 256;
export const SLOTS_PER_BUCKET = SLOTS / BUCKETS;
/** Bytes per slot in a delta (slots < 2^24); PAD_SLOT marks a padding entry. */
export const DELTA_SLOT_BYTES = 3;
export const PAD_SLOT = 0xffffff;

/**
 * Entries per message come in these sizes only: a message's keywords are
 * padded with random addresses to the next class, so the provider learns
 * one of 15 sizes (at most 4 bits), never the count. The last is the most
 * keywords a message is indexed under (hostile mail is cut there).
 */
export const SIZE_CLASSES = [16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048] as const;
export const MAX_KEYWORDS = SIZE_CLASSES[SIZE_CLASSES.length - 1];

/** The class index for `n` real entries. */
export function sizeClass(n: number): number {
  const i = SIZE_CLASSES.findIndex((c) => c >= n);
  if (i < 0) throw new RangeError(`${n} entries exceed the largest size class (${MAX_KEYWORDS})`);
  return i;
}

/** Request bounds the provider enforces (and clients keep to). */
export const REQUEST_LIMITS = {
  docsPerUpdate: 256,
  /** Addresses in one search request (all its keywords together). */
  searchAddresses: 1 << 18,
  recordsPerRequest: 100,
  tagsPerRequest: 4096,
  /** Messages one removal takes: one update's worth, so no request deletes more entries than one inserts. */
  removePerRequest: 256,
  /** A sealed delta: at most DELTA_SLOT_BYTES per padded entry of its update, plus the seal. */
  wrappedKeyBytes: 64 * 1024,
  /** A sealed snapshot bucket: SLOTS_PER_BUCKET varints of at most 5 bytes, plus the seal. */
  bucketBytes: SLOTS_PER_BUCKET * 5 + SEAL_OVERHEAD,
} as const;

/** Largest body of each request kind, checked before it is read. */
export const BODY_LIMITS = {
  update:
    4 +
    2 +
    REQUEST_LIMITS.docsPerUpdate *
      (TAG_BYTES + SORT_BYTES + 1 + RECORD_BYTES + MAX_KEYWORDS * (ADDR_BYTES + CHECK_BYTES)) +
    4 +
    REQUEST_LIMITS.docsPerUpdate * MAX_KEYWORDS * DELTA_SLOT_BYTES +
    SEAL_OVERHEAD,
  compact: 4 + 2 + BUCKETS * (4 + REQUEST_LIMITS.bucketBytes),
  search: REQUEST_LIMITS.searchAddresses * ADDR_BYTES,
  records: REQUEST_LIMITS.recordsPerRequest * TAG_BYTES,
  tags: REQUEST_LIMITS.tagsPerRequest * TAG_BYTES,
  key: REQUEST_LIMITS.wrappedKeyBytes,
} as const;

/** Why a body was refused; the provider answers 400 with this message. */
export class RemoteIndexFormatError extends Error {
  override name = 'RemoteIndexFormatError';
}

/** A bounded big-endian reader over one body. */
class BodyReader {
  private pos = 0;
  constructor(
    private readonly buf: Uint8Array,
    private readonly what: string,
  ) {}

  u8(): number {
    return this.take(1)[0];
  }

  u16(): number {
    const b = this.take(2);
    return (b[0] << 8) | b[1];
  }

  u32(): number {
    const b = this.take(4);
    return ((b[0] << 24) | (b[1] << 16) | (b[2] << 8) | b[3]) >>> 0;
  }

  /** A count, refused above `max`. */
  count(field: string, max: number, width: 2 | 4 = 4): number {
    const n = width === 2 ? this.u16() : this.u32();
    if (n > max) throw new RemoteIndexFormatError(`${this.what}: ${field} is ${n}, at most ${max} allowed`);
    return n;
  }

  /** Exactly n bytes. */
  take(n: number): Uint8Array {
    if (this.pos + n > this.buf.length)
      throw new RemoteIndexFormatError(`${this.what}: body ends ${this.pos + n - this.buf.length} bytes early`);
    const out = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return out;
  }

  /** u32 length, then that many bytes (at most max). */
  bytes(field: string, max: number): Uint8Array {
    return this.take(this.count(`${field} length`, max));
  }

  end(): void {
    if (this.pos !== this.buf.length)
      throw new RemoteIndexFormatError(`${this.what}: ${this.buf.length - this.pos} trailing bytes`);
  }
}

/** Collects byte strings and integers, then joins them once. */
class BodyWriter {
  private parts: Uint8Array[] = [];
  private size = 0;

  u8(v: number): this {
    return this.put(Uint8Array.of(v));
  }

  u16(v: number): this {
    return this.put(Uint8Array.of(v >>> 8, v & 0xff));
  }

  u32(v: number): this {
    return this.put(Uint8Array.of(v >>> 24, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff));
  }

  put(b: Uint8Array): this {
    this.parts.push(b);
    this.size += b.length;
    return this;
  }

  /** u32 length, then the bytes. */
  bytes(b: Uint8Array): this {
    return this.u32(b.length).put(b);
  }

  done(): Uint8Array {
    const out = new Uint8Array(this.size);
    let off = 0;
    for (const p of this.parts) {
      out.set(p, off);
      off += p.length;
    }
    return out;
  }
}

/** Checks that a byte string is a whole number of `unit`-byte items, at most max of them. */
export function items(body: Uint8Array, unit: number, max: number, what: string): number {
  if (body.length % unit !== 0)
    throw new RemoteIndexFormatError(`${what}: ${body.length} bytes is not a multiple of ${unit}`);
  if (body.length / unit > max)
    throw new RemoteIndexFormatError(`${what}: ${body.length / unit} items, at most ${max} allowed`);
  return body.length / unit;
}

// ---- update: one batch of messages, committed as one version ----------------------

export interface UpdateDoc {
  tag: Uint8Array;
  sort: Uint8Array;
  /** Index into SIZE_CLASSES: addrs holds SIZE_CLASSES[sizeClass] addresses. */
  sizeClass: number;
  record: Uint8Array;
  addrs: Uint8Array;
  /** Each address's check (CHECK_BYTES), in the same order. */
  checks: Uint8Array;
}

export interface UpdateBody {
  /** The version the client built its counters on; the provider commits baseVersion + 1 or refuses. */
  baseVersion: number;
  docs: UpdateDoc[];
  /** The sealed delta: the counters' slots this batch advanced (docs/remote-search.md#state). */
  delta: Uint8Array;
}

export function encodeUpdate(u: UpdateBody): Uint8Array {
  const w = new BodyWriter().u32(u.baseVersion).u16(u.docs.length);
  for (const d of u.docs) w.put(d.tag).put(d.sort).u8(d.sizeClass).put(d.record).put(d.addrs).put(d.checks);
  return w.bytes(u.delta).done();
}

export function decodeUpdate(body: Uint8Array): UpdateBody {
  const r = new BodyReader(body, 'update');
  const baseVersion = r.u32();
  const n = r.count('docs', REQUEST_LIMITS.docsPerUpdate, 2);
  if (n === 0) throw new RemoteIndexFormatError('update: no documents');
  const docs: UpdateDoc[] = [];
  let padded = 0;
  for (let i = 0; i < n; i++) {
    const tag = r.take(TAG_BYTES);
    const sort = r.take(SORT_BYTES);
    const sizeClass = r.u8();
    if (sizeClass >= SIZE_CLASSES.length)
      throw new RemoteIndexFormatError(`update: size class ${sizeClass} is unknown`);
    const record = r.take(RECORD_BYTES);
    const addrs = r.take(SIZE_CLASSES[sizeClass] * ADDR_BYTES);
    const checks = r.take(SIZE_CLASSES[sizeClass] * CHECK_BYTES);
    padded += SIZE_CLASSES[sizeClass];
    docs.push({ tag, sort, sizeClass, record, addrs, checks });
  }
  const delta = r.bytes('delta', padded * DELTA_SLOT_BYTES + SEAL_OVERHEAD);
  if (delta.length !== padded * DELTA_SLOT_BYTES + SEAL_OVERHEAD)
    throw new RemoteIndexFormatError(
      `update: the delta must be ${padded * DELTA_SLOT_BYTES + SEAL_OVERHEAD} bytes (one slot per padded entry)`,
    );
  r.end();
  return { baseVersion, docs, delta };
}

// ---- compact: a new snapshot of every counter ------------------------------------------

export interface CompactBody {
  baseVersion: number;
  /** BUCKETS sealed buckets, in order. */
  buckets: Uint8Array[];
}

export function encodeCompact(c: CompactBody): Uint8Array {
  const w = new BodyWriter().u32(c.baseVersion).u16(c.buckets.length);
  for (const b of c.buckets) w.bytes(b);
  return w.done();
}

export function decodeCompact(body: Uint8Array): CompactBody {
  const r = new BodyReader(body, 'compact');
  const baseVersion = r.u32();
  const n = r.u16();
  if (n !== BUCKETS) throw new RemoteIndexFormatError(`compact: ${n} buckets, exactly ${BUCKETS} expected`);
  const buckets: Uint8Array[] = [];
  for (let i = 0; i < n; i++) buckets.push(r.bytes('bucket', REQUEST_LIMITS.bucketBytes));
  r.end();
  return { baseVersion, buckets };
}

// ---- state: what a device needs to know the counters --------------------------------------

export interface StateDelta {
  version: number;
  /** The tags of the documents this version added (the provider knows them; devices learn what is indexed). */
  tags: Uint8Array;
  sealed: Uint8Array;
}

export interface StateBody {
  /** The latest version (0: nothing committed yet). */
  version: number;
  /** The version of the latest snapshot (0: none). */
  snapshotVersion: number;
  /** The snapshot's sealed buckets the client asked for (all, or those of its keywords), by index. */
  buckets: { index: number; sealed: Uint8Array }[];
  /** Every delta after max(since, snapshotVersion), oldest first. */
  deltas: StateDelta[];
}

/** Deltas one state answer may carry (the provider asks for compaction well before). */
export const MAX_STATE_DELTAS = 8192;

export function encodeState(s: StateBody): Uint8Array {
  const w = new BodyWriter().u32(s.version).u32(s.snapshotVersion).u16(s.buckets.length);
  for (const b of s.buckets) w.u16(b.index).bytes(b.sealed);
  w.u32(s.deltas.length);
  for (const d of s.deltas) w.u32(d.version).bytes(d.tags).bytes(d.sealed);
  return w.done();
}

export function decodeState(body: Uint8Array): StateBody {
  const r = new BodyReader(body, 'state');
  const version = r.u32();
  const snapshotVersion = r.u32();
  const buckets: StateBody['buckets'] = [];
  const nb = r.count('buckets', BUCKETS, 2);
  for (let i = 0; i < nb; i++) {
    const index = r.u16();
    if (index >= BUCKETS) throw new RemoteIndexFormatError(`state: bucket ${index} does not exist`);
    buckets.push({ index, sealed: r.bytes('bucket', REQUEST_LIMITS.bucketBytes) });
  }
  const deltas: StateDelta[] = [];
  const nd = r.count('deltas', MAX_STATE_DELTAS);
  for (let i = 0; i < nd; i++) {
    const v = r.u32();
    const tags = r.bytes('tags', REQUEST_LIMITS.docsPerUpdate * TAG_BYTES);
    items(tags, TAG_BYTES, REQUEST_LIMITS.docsPerUpdate, 'state tags');
    deltas.push({ version: v, tags, sealed: r.bytes('delta', BODY_LIMITS.update) });
  }
  r.end();
  return { version, snapshotVersion, buckets, deltas };
}

// ---- search: addresses in, the documents they name out -------------------------------------

export interface SearchDoc {
  tag: Uint8Array;
  sort: Uint8Array;
}

export interface SearchAnswer {
  docs: SearchDoc[];
  /** Per requested address: 0 when no entry has it, else 1 + its document's index in docs. */
  hits: Uint32Array;
  /** Per requested address: the entry's check (CHECK_BYTES as a u32), where there is a hit. */
  checks: Uint32Array;
}

/** Layout: u32 documents, each tag ‖ sort key; a u32 per address (hits); a u32 check per hit, in address order. */
export function encodeSearchAnswer(a: SearchAnswer): Uint8Array {
  const w = new BodyWriter().u32(a.docs.length);
  for (const d of a.docs) w.put(d.tag).put(d.sort);
  const found = a.hits.reduce((n, h) => n + (h === 0 ? 0 : 1), 0);
  const words = new Uint8Array((a.hits.length + found) * 4);
  const view = new DataView(words.buffer);
  let at = a.hits.length;
  a.hits.forEach((h, i) => {
    view.setUint32(i * 4, h);
    if (h !== 0) view.setUint32(4 * at++, a.checks[i]);
  });
  return w.put(words).done();
}

/** `addresses`: how many the request asked about (the answer must have exactly one hit word each). */
export function decodeSearchAnswer(body: Uint8Array, addresses: number): SearchAnswer {
  const r = new BodyReader(body, 'search answer');
  const n = r.count('docs', addresses);
  const docs: SearchDoc[] = [];
  for (let i = 0; i < n; i++) docs.push({ tag: r.take(TAG_BYTES), sort: r.take(SORT_BYTES) });
  const raw = r.take(addresses * 4);
  const view = new DataView(raw.buffer, raw.byteOffset, raw.byteLength);
  const hits = new Uint32Array(addresses);
  let found = 0;
  for (let i = 0; i < addresses; i++) {
    hits[i] = view.getUint32(i * 4);
    if (hits[i] > n) throw new RemoteIndexFormatError(`search answer: hit ${i} names document ${hits[i]} of ${n}`);
    if (hits[i] !== 0) found++;
  }
  const rawChecks = r.take(found * 4);
  r.end();
  const checkView = new DataView(rawChecks.buffer, rawChecks.byteOffset, rawChecks.byteLength);
  const checks = new Uint32Array(addresses);
  for (let i = 0, at = 0; i < addresses; i++) if (hits[i] !== 0) checks[i] = checkView.getUint32(4 * at++);
  return { docs, hits, checks };
}

// ---- records: the sealed records of some documents -------------------------------------------

/** One sealed record per asked tag, empty when the provider has none. */
export function encodeRecords(records: (Uint8Array | undefined)[]): Uint8Array {
  const w = new BodyWriter();
  for (const r of records) w.bytes(r ?? new Uint8Array(0));
  return w.done();
}

export function decodeRecords(body: Uint8Array, asked: number): (Uint8Array | undefined)[] {
  const r = new BodyReader(body, 'records');
  const out: (Uint8Array | undefined)[] = [];
  for (let i = 0; i < asked; i++) {
    const rec = r.bytes('record', RECORD_BYTES);
    if (rec.length !== 0 && rec.length !== RECORD_BYTES)
      throw new RemoteIndexFormatError(`records: a record of ${rec.length} bytes (expected ${RECORD_BYTES})`);
    out.push(rec.length ? rec : undefined);
  }
  r.end();
  return out;
}

/** Splits concatenated fixed-size items (tags, addresses) into views. */
export function split(body: Uint8Array, unit: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  for (let off = 0; off < body.length; off += unit) out.push(body.subarray(off, off + unit));
  return out;
}

/** The HTTP paths, under the provider's base URL. */
export const REMOTE_INDEX_PATH = '/remote-index';
