// The private blocklist (docs/blocklist.md): the OPRF both sides use, how an
// OPRF output becomes an entry of the published list, and the byte layouts of
// a list package and a daily delta package.
//
// OPRF: RFC 9497 base mode, ristretto255-SHA512 (protocol/oprf.ts, on
// libsodium's WebAssembly build; await oprfReady() before use). The provider
// holds the key k; for a listed item x it publishes
//   out = Finalize(x, k·H(x))                 (64 bytes, RFC 9497 §3.3.1)
//   h   = SHA-512("pmf-blocklist/1 entry\0" ‖ out)
//   tag = h[0..8)    pad = h[8..12)    entry = tag ‖ (record XOR pad)
// so a client that got out from the provider (blinded, one message at a time)
// finds the entry by its tag and decrypts the record; without out the tag
// and the record are pseudorandom. Each pad is used for one entry only.
//
// List package: magic "PMFBLK\0\1" · u32 BE header length · header JSON ·
// body = entries sorted by tag (strictly increasing, so each tag is unique).
// Delta package: magic "PMFBLD\0\1" · u32 · header JSON (with the target
// list's whole header) · body = removed tags (sorted) ‖ added entries (sorted).
// Applying a delta rebuilds the target list byte for byte, so the client
// checks it against the same pinned, logged package hash as a full download.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, concatBytes } from '@noble/hashes/utils.js';
import { LIMITS, MAX_HEADER_BYTES } from './limits.js';
import { sha512 } from '../wasm/ts/ristretto.js';

/** RFC 9497 OPRF(ristretto255, SHA-512), base mode, and Evaluate (the provider building its list). */
export { evaluate, oprf, OprfElementError, oprfReady } from './oprf.js';
/** Serialized ristretto255 element (blinded and evaluated elements on the wire). */
export const ELEMENT_BYTES = 32;

/**
 * Items one message is looked up by, and the number of elements every
 * request carries: the client pads with random elements to exactly this
 * many, so the provider learns nothing from the count (docs/blocklist.md#padding).
 */
export const ITEMS_PER_MESSAGE = LIMITS.blocklistItems;

export const TAG_BYTES = 8;
export const RECORD_BYTES = 4;
export const ENTRY_BYTES = TAG_BYTES + RECORD_BYTES;

export const LIST_FORMAT = 'pmf-blocklist/1';
export const DELTA_FORMAT = 'pmf-blocklist-delta/1';
const LIST_MAGIC = new Uint8Array([0x50, 0x4d, 0x46, 0x42, 0x4c, 0x4b, 0x00, 0x01]); // PMFBLK\0\1
const DELTA_MAGIC = new Uint8Array([0x50, 0x4d, 0x46, 0x42, 0x4c, 0x44, 0x00, 0x01]); // PMFBLD\0\1
const ENTRY_DST = new TextEncoder().encode('pmf-blocklist/1 entry\0');

/** Where the package log records list versions: never a model id (those have no "blocklist-" prefix). */
export const logIdOf = (listId: string): string => `blocklist-${listId}`;

/** What the provider attaches to a listed item (decrypted only by a client that holds the item). */
export interface BlockRecord {
  /** Index into the list header's `categories`. */
  category: number;
  /** 0..100: how sure the provider is. */
  score: number;
  /** Days since 1970-01-01 (UTC) the item has been listed. */
  sinceDay: number;
}

export interface ListHeader {
  format: typeof LIST_FORMAT;
  listId: string;
  version: number;
  /** Category names the records index ("phishing", "malware", ...). */
  categories: string[];
  /**
   * The list key's public key K = k·G in hex, which clients blind with
   * (protocol/oprf.ts `additive`). Lists published before it was added have
   * none; clients cannot look items up in them.
   */
  publicKey?: string;
  entries: number;
  bodyBytes: number;
  bodySha256: string;
  createdAt: string;
}

export interface DeltaHeader {
  format: typeof DELTA_FORMAT;
  listId: string;
  fromVersion: number;
  /** The list this delta turns version fromVersion into. */
  target: ListHeader;
  removed: number;
  added: number;
  bodyBytes: number;
  bodySha256: string;
}

export interface BlockList {
  header: ListHeader;
  /** Entries sorted by tag, ENTRY_BYTES each. */
  body: Uint8Array;
}

/**
 * The entry key material of one OPRF output: the tag to look up and the
 * record's one-time pad. SHA-512 is libsodium's (about 5x faster than
 * @noble/hashes here): await oprfReady() first, as for the OPRF.
 */
export function entryKeys(output: Uint8Array): { tag: Uint8Array; pad: Uint8Array } {
  const h = sha512(concatBytes(ENTRY_DST, output));
  return { tag: h.subarray(0, TAG_BYTES), pad: h.subarray(TAG_BYTES, ENTRY_BYTES) };
}

export function encodeRecord(r: BlockRecord, pad: Uint8Array): Uint8Array {
  const out = new Uint8Array(RECORD_BYTES);
  out[0] = r.category;
  out[1] = r.score;
  new DataView(out.buffer).setUint16(2, r.sinceDay);
  for (let i = 0; i < RECORD_BYTES; i++) out[i] ^= pad[i];
  return out;
}

export function decodeRecord(sealed: Uint8Array, pad: Uint8Array): BlockRecord {
  const b = new Uint8Array(RECORD_BYTES);
  for (let i = 0; i < RECORD_BYTES; i++) b[i] = sealed[i] ^ pad[i];
  return { category: b[0], score: b[1], sinceDay: new DataView(b.buffer).getUint16(2) };
}

/** The entry a provider publishes for an item whose OPRF output is `output`. */
export function makeEntry(output: Uint8Array, record: BlockRecord): Uint8Array {
  const { tag, pad } = entryKeys(output);
  return concatBytes(tag, encodeRecord(record, pad));
}

/** Index of the entry with `tag` in a sorted body, or -1. */
export function findTag(body: Uint8Array, tag: Uint8Array): number {
  let lo = 0;
  let hi = body.length / ENTRY_BYTES - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareTag(body, mid * ENTRY_BYTES, tag, 0);
    if (c === 0) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** Looks up one OPRF output in a list: its record, or undefined when the item is not listed. */
export function lookup(list: BlockList, output: Uint8Array): BlockRecord | undefined {
  const { tag, pad } = entryKeys(output);
  const i = findTag(list.body, tag);
  if (i < 0) return undefined;
  const at = i * ENTRY_BYTES + TAG_BYTES;
  return decodeRecord(list.body.subarray(at, at + RECORD_BYTES), pad);
}

/** Builds a list package from entries (any order; sorted here, duplicate tags refused). */
export function encodeList(
  fields: Omit<ListHeader, 'format' | 'entries' | 'bodyBytes' | 'bodySha256'>,
  entries: Uint8Array[],
): Uint8Array {
  const body = sortedBody(entries, ENTRY_BYTES);
  const header: ListHeader = {
    format: LIST_FORMAT,
    ...fields,
    entries: entries.length,
    bodyBytes: body.length,
    bodySha256: bytesToHex(sha256(body)),
  };
  return withPrefix(LIST_MAGIC, validateListHeader(header), body);
}

/** Parses a whole list package and checks its body (length, hash, order); throws naming the problem. */
export function openList(data: Uint8Array): BlockList {
  const { json, body } = splitPrefix(data, LIST_MAGIC, 'list package');
  const header = validateListHeader(json);
  checkBody(header, body, 'list package');
  return { header, body };
}

/** The delta package from `from` to `to` (both of one list). */
export function encodeDelta(from: BlockList, to: BlockList): Uint8Array {
  if (from.header.listId !== to.header.listId) throw new Error('a delta joins two versions of one list');
  const removed: Uint8Array[] = [];
  const added: Uint8Array[] = [];
  const has = (list: BlockList, entry: Uint8Array): boolean => {
    const i = findTag(list.body, entry);
    return i >= 0 && equalBytes(list.body.subarray(i * ENTRY_BYTES, (i + 1) * ENTRY_BYTES), entry);
  };
  for (const e of entriesOf(from)) if (!has(to, e)) removed.push(e.subarray(0, TAG_BYTES));
  for (const e of entriesOf(to)) if (!has(from, e)) added.push(e);
  const body = concatBytes(sortedBody(removed, TAG_BYTES), sortedBody(added, ENTRY_BYTES));
  const header: DeltaHeader = {
    format: DELTA_FORMAT,
    listId: to.header.listId,
    fromVersion: from.header.version,
    target: to.header,
    removed: removed.length,
    added: added.length,
    bodyBytes: body.length,
    bodySha256: bytesToHex(sha256(body)),
  };
  return withPrefix(DELTA_MAGIC, header, body);
}

/**
 * Applies a delta package to the list it starts from and returns the target
 * list's package bytes (checked like a downloaded one: body hash, order).
 */
export function applyDelta(base: BlockList, delta: Uint8Array): Uint8Array {
  const { json, body } = splitPrefix(delta, DELTA_MAGIC, 'delta package');
  const h = json as Partial<DeltaHeader>;
  const bad = (why: string): never => {
    throw new Error(`delta package: ${why}`);
  };
  if (typeof json !== 'object' || json === null) bad('header is not an object');
  if (h.format !== DELTA_FORMAT) bad(`format must be ${DELTA_FORMAT}`);
  const target = validateListHeader(h.target);
  if (h.listId !== base.header.listId || target.listId !== base.header.listId) bad('is for another list');
  if (h.fromVersion !== base.header.version) bad(`starts at version ${h.fromVersion}, not ${base.header.version}`);
  if (!isCount(h.removed) || !isCount(h.added)) bad('removed and added must be counts');
  if (body.length !== h.removed! * TAG_BYTES + h.added! * ENTRY_BYTES || body.length !== h.bodyBytes)
    bad('body length does not match its counts');
  if (bytesToHex(sha256(body)) !== h.bodySha256) bad('body SHA-256 mismatch');
  const cut = h.removed! * TAG_BYTES;
  const removed = body.subarray(0, cut);
  const kept = entriesOf(base).filter((e) => !(findTagIn(removed, e, TAG_BYTES) >= 0));
  const added = Array.from({ length: h.added! }, (_, i) =>
    body.subarray(cut + i * ENTRY_BYTES, cut + (i + 1) * ENTRY_BYTES),
  );
  const next = sortedBody([...kept, ...added], ENTRY_BYTES);
  checkBody(target, next, 'delta result');
  return withPrefix(LIST_MAGIC, target, next);
}

const ID = /^[A-Za-z0-9._-]{1,64}$/;
const HEX32 = /^[0-9a-f]{64}$/;
const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isInteger(v) && v >= 0 && v <= 2 ** 32;

export function validateListHeader(x: unknown): ListHeader {
  const bad = (field: string, why: string): never => {
    throw new Error(`list package header: ${field} ${why}`);
  };
  if (typeof x !== 'object' || x === null || Array.isArray(x)) return bad('(root)', 'is not an object');
  const h = x as Record<string, unknown>;
  if (h.format !== LIST_FORMAT) bad('format', `must be ${LIST_FORMAT}`);
  if (typeof h.listId !== 'string' || !ID.test(h.listId)) bad('listId', 'must match [A-Za-z0-9._-]{1,64}');
  if (!isCount(h.version) || h.version < 1) bad('version', 'must be a positive integer');
  if (
    !Array.isArray(h.categories) ||
    h.categories.length < 1 ||
    h.categories.length > 256 ||
    !h.categories.every((c) => typeof c === 'string' && c.length >= 1 && c.length <= 64)
  )
    bad('categories', 'must be 1..256 names of 1..64 characters');
  if (h.publicKey !== undefined && (typeof h.publicKey !== 'string' || !HEX32.test(h.publicKey)))
    bad('publicKey', 'must be 32 bytes of hex');
  if (!isCount(h.entries)) bad('entries', 'must be a count');
  if (h.bodyBytes !== (h.entries as number) * ENTRY_BYTES) bad('bodyBytes', `must be entries × ${ENTRY_BYTES}`);
  if (typeof h.bodySha256 !== 'string' || !HEX32.test(h.bodySha256)) bad('bodySha256', 'must be 32 bytes of hex');
  if (typeof h.createdAt !== 'string' || h.createdAt.length > 64) bad('createdAt', 'must be a short string');
  return h as unknown as ListHeader;
}

function checkBody(header: ListHeader, body: Uint8Array, what: string): void {
  if (body.length !== header.bodyBytes)
    throw new Error(`${what}: body is ${body.length} bytes, header says ${header.bodyBytes}`);
  if (bytesToHex(sha256(body)) !== header.bodySha256) throw new Error(`${what}: body SHA-256 mismatch`);
  for (let i = 1; i < header.entries; i++) {
    if (compareTag(body, (i - 1) * ENTRY_BYTES, body, i * ENTRY_BYTES) >= 0)
      throw new Error(`${what}: entries are not sorted by unique tags`);
  }
}

function entriesOf(list: BlockList): Uint8Array[] {
  return Array.from({ length: list.header.entries }, (_, i) =>
    list.body.subarray(i * ENTRY_BYTES, (i + 1) * ENTRY_BYTES),
  );
}

/** Concatenates records sorted by their first TAG_BYTES bytes; refuses a repeated tag. */
function sortedBody(items: Uint8Array[], size: number): Uint8Array {
  const sorted = [...items].sort((a, b) => compareTag(a, 0, b, 0));
  for (let i = 1; i < sorted.length; i++) {
    if (compareTag(sorted[i - 1], 0, sorted[i], 0) === 0) throw new Error('two entries share a tag');
  }
  const out = new Uint8Array(sorted.length * size);
  sorted.forEach((e, i) => out.set(e.subarray(0, size), i * size));
  return out;
}

function findTagIn(sortedTags: Uint8Array, entry: Uint8Array, stride: number): number {
  let lo = 0;
  let hi = sortedTags.length / stride - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = compareTag(sortedTags, mid * stride, entry, 0);
    if (c === 0) return mid;
    if (c < 0) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

function compareTag(a: Uint8Array, ao: number, b: Uint8Array, bo: number): number {
  for (let i = 0; i < TAG_BYTES; i++) {
    const d = a[ao + i] - b[bo + i];
    if (d !== 0) return d;
  }
  return 0;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

function withPrefix(magic: Uint8Array, header: object, body: Uint8Array): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(header));
  if (json.length > MAX_HEADER_BYTES) throw new Error('package header is too large');
  const len = new Uint8Array(4);
  new DataView(len.buffer).setUint32(0, json.length);
  return concatBytes(magic, len, json, body);
}

function splitPrefix(data: Uint8Array, magic: Uint8Array, what: string): { json: unknown; body: Uint8Array } {
  if (data.length < magic.length + 4 || magic.some((b, i) => data[i] !== b))
    throw new Error(`${what}: bad magic or unsupported version`);
  const len = new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(magic.length);
  const start = magic.length + 4;
  if (len > MAX_HEADER_BYTES || start + len > data.length) throw new Error(`${what}: truncated or oversized header`);
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data.subarray(start, start + len)));
  } catch {
    throw new Error(`${what}: header is not valid UTF-8 JSON`);
  }
  return { json, body: data.subarray(start + len) };
}
