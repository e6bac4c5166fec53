// The remote index's keys and pseudorandom functions (docs/remote-search.md#scheme).
// Everything comes from one 32-byte search key, which the user's OpenPGP key
// wraps (wrap.ts) and the provider only stores:
//
//   K_kw, K_tag, K_sort, K_check = BLAKE3-derive_key("pmf remote-index v1 <purpose>", search key)
//   K_seal              = the same with purpose "seal", as an AES-256-GCM key
//   (k_w, slot(w))      = BLAKE3-keyed(K_kw, w)[0..32), u32(…[32..36)) mod SLOTS
//   address(w, c)       = BLAKE3-keyed(k_w, u32be(c))[0..16)      Mitra's G(K, w‖c‖0)
//   mask(w, c)          = u32(BLAKE3-keyed(k_w, u32be(c))[16..20)), the same compression
//   tag(id)             = BLAKE3-keyed(K_tag, id)[0..16)
//   docPad(tag)         = u32(BLAKE3-keyed(K_check, tag)[0..4))
//   check(w, c, tag)    = mask(w, c) XOR docPad(tag)
//   sortPad(tag)        = BLAKE3-keyed(K_sort, tag)[0..8)
//
// A check is a one-time pad (the mask, never used twice: one per address)
// over a pad per message: the provider, which knows each entry's message,
// learns neither, so it cannot make the check of an address under another
// message (or move an entry to another address) but by a 2^-32 guess.
//
// BLAKE3 in keyed mode is a PRF (one compression for inputs up to 64 bytes,
// blake3-block.ts; @noble/hashes' blake3() for longer ones). Sealing is
// WebCrypto's AES-GCM with a random 96-bit nonce and associated data naming
// what is sealed.
import { blake3 } from '@noble/hashes/blake3.js';
import { keyedBlock, keyWords } from './blake3-block.js';
import {
  ADDR_BYTES,
  CHECK_BYTES,
  SEAL_OVERHEAD,
  SLOTS,
  SORT_BYTES,
  TAG_BYTES,
} from '../../../protocol/remote-search.js';

export const SEARCH_KEY_BYTES = 32;

/** WebCrypto's types, named through the API so the code checks under DOM, WebWorker and Node's types alike. */
type AesKey = Awaited<ReturnType<typeof crypto.subtle.importKey>>;
type Bytes = Parameters<typeof crypto.subtle.encrypt>[2];

/** A PRF key, also as the words BLAKE3 chains from. */
export interface PrfKey {
  bytes: Uint8Array;
  words: Uint32Array;
}

export interface RemoteKeys {
  keyword: PrfKey;
  tag: PrfKey;
  sort: PrfKey;
  check: PrfKey;
  seal: AesKey;
}

const prfKey = (bytes: Uint8Array): PrfKey => ({ bytes, words: keyWords(bytes) });

/** BLAKE3-keyed(key, input), dkLen bytes: one compression when it fits in a block. */
function prf(key: PrfKey, input: Uint8Array, dkLen: number): Uint8Array {
  if (input.length <= 64 && dkLen <= 64) return keyedBlock(key.words, input, new Uint8Array(dkLen));
  return blake3(input, { key: key.bytes, dkLen });
}

const utf8 = new TextEncoder();
const derive = (key: Uint8Array, purpose: string): Uint8Array =>
  blake3(key, { context: utf8.encode(`pmf remote-index v1 ${purpose}`), dkLen: 32 });

export async function deriveKeys(searchKey: Uint8Array): Promise<RemoteKeys> {
  if (searchKey.length !== SEARCH_KEY_BYTES) throw new RangeError(`a search key is ${SEARCH_KEY_BYTES} bytes`);
  const sealBytes = derive(searchKey, 'seal');
  const seal = await crypto.subtle.importKey('raw', sealBytes as Bytes, 'AES-GCM', false, ['encrypt', 'decrypt']);
  sealBytes.fill(0);
  return {
    keyword: prfKey(derive(searchKey, 'keyword')),
    tag: prfKey(derive(searchKey, 'tag')),
    sort: prfKey(derive(searchKey, 'sort')),
    check: prfKey(derive(searchKey, 'check')),
    seal,
  };
}

/** A keyword's own key and its counter's slot. */
export interface KeywordKey {
  key: PrfKey;
  slot: number;
}

export function keywordKey(keys: RemoteKeys, keyword: string): KeywordKey {
  const out = prf(keys.keyword, utf8.encode(keyword), 36);
  const slot = ((out[32] << 24) | (out[33] << 16) | (out[34] << 8) | out[35]) >>> 0;
  return { key: prfKey(out.slice(0, 32)), slot: slot % SLOTS };
}

const counterBytes = new Uint8Array(4);

/** The address of the keyword's `counter`-th entry (counters start at 1), into `out` when given. */
export function address(k: KeywordKey, counter: number, out = new Uint8Array(ADDR_BYTES)): Uint8Array {
  counterBytes[0] = counter >>> 24;
  counterBytes[1] = (counter >>> 16) & 0xff;
  counterBytes[2] = (counter >>> 8) & 0xff;
  counterBytes[3] = counter & 0xff;
  return keyedBlock(k.key.words, counterBytes, out);
}

const counterBytes20 = new Uint8Array(ADDR_BYTES + CHECK_BYTES);

/** The address of the keyword's `counter`-th entry into `out`, and its mask (one compression). */
export function addressAndMask(k: KeywordKey, counter: number, out: Uint8Array): number {
  counterBytes[0] = counter >>> 24;
  counterBytes[1] = (counter >>> 16) & 0xff;
  counterBytes[2] = (counter >>> 8) & 0xff;
  counterBytes[3] = counter & 0xff;
  const both = keyedBlock(k.key.words, counterBytes, counterBytes20);
  out.set(both.subarray(0, ADDR_BYTES));
  return u32(both, ADDR_BYTES);
}

/** The pad of a message's checks. */
export const docPad = (keys: RemoteKeys, tag: Uint8Array): number => u32(prf(keys.check, tag, CHECK_BYTES), 0);

const u32 = (b: Uint8Array, at: number): number =>
  ((b[at] << 24) | (b[at + 1] << 16) | (b[at + 2] << 8) | b[at + 3]) >>> 0;

/** Addresses 1..count of a keyword, back to back (a search token). */
export function addresses(k: KeywordKey, count: number): Uint8Array {
  const out = new Uint8Array(count * ADDR_BYTES);
  for (let c = 1; c <= count; c++) address(k, c, out.subarray((c - 1) * ADDR_BYTES, c * ADDR_BYTES));
  return out;
}

export const tagOf = (keys: RemoteKeys, deliveryId: string): Uint8Array =>
  prf(keys.tag, utf8.encode(deliveryId), TAG_BYTES);

/** The date (ms since the epoch, 0 ≤ date < 2^53) XOR a pad only the key holder can make: 8 bytes. */
export function sealSort(keys: RemoteKeys, tag: Uint8Array, date: number): Uint8Array {
  const pad = prf(keys.sort, tag, SORT_BYTES);
  const v = new DataView(pad.buffer, pad.byteOffset, SORT_BYTES);
  v.setUint32(0, v.getUint32(0) ^ Math.floor(date / 2 ** 32));
  v.setUint32(4, v.getUint32(4) ^ (date >>> 0));
  return pad;
}

export function openSort(keys: RemoteKeys, tag: Uint8Array, sealed: Uint8Array): number {
  const pad = prf(keys.sort, tag, SORT_BYTES);
  const p = new DataView(pad.buffer, pad.byteOffset, SORT_BYTES);
  const s = new DataView(sealed.buffer, sealed.byteOffset, SORT_BYTES);
  return ((p.getUint32(0) ^ s.getUint32(0)) >>> 0) * 2 ** 32 + ((p.getUint32(4) ^ s.getUint32(4)) >>> 0);
}

/** Fills `buf` from the CSPRNG (getRandomValues gives at most 64 KiB a call). */
export function randomFill<T extends Uint8Array>(buf: T): T {
  for (let off = 0; off < buf.length; off += 65_536) crypto.getRandomValues(buf.subarray(off, off + 65_536));
  return buf;
}

/** Associated data: what a sealed blob is, so one is never accepted as another. */
export const sealedAs = (what: string, ...parts: (number | Uint8Array)[]): Uint8Array => {
  const bytes: number[] = [...utf8.encode(`pmf remote-index v1 ${what}`)];
  for (const p of parts) {
    if (typeof p === 'number') bytes.push(p >>> 24, (p >>> 16) & 0xff, (p >>> 8) & 0xff, p & 0xff);
    else bytes.push(...p);
  }
  return Uint8Array.from(bytes);
};

export async function seal(keys: RemoteKeys, plain: Uint8Array, ad: Uint8Array): Promise<Uint8Array> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = new Uint8Array(
    await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: ad as Bytes }, keys.seal, plain as Bytes),
  );
  const out = new Uint8Array(12 + ct.length);
  out.set(iv);
  out.set(ct, 12);
  return out;
}

/** Throws RemoteIndexIntegrityError when the blob was not sealed under this key as `ad`. */
export async function open(keys: RemoteKeys, sealed: Uint8Array, ad: Uint8Array): Promise<Uint8Array> {
  if (sealed.length < SEAL_OVERHEAD) throw new RemoteIndexIntegrityError('a sealed blob is too short');
  try {
    return new Uint8Array(
      await crypto.subtle.decrypt(
        { name: 'AES-GCM', iv: sealed.subarray(0, 12) as Bytes, additionalData: ad as Bytes },
        keys.seal,
        sealed.subarray(12) as Bytes,
      ),
    );
  } catch {
    throw new RemoteIndexIntegrityError('the provider returned data this search key did not seal (or it was altered)');
  }
}

/** What the provider returned was not made by this search key: a wrong key, damage or tampering. */
export class RemoteIndexIntegrityError extends Error {
  override name = 'RemoteIndexIntegrityError';
}
