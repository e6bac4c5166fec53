// BLAKE3 in keyed-hash mode for an input of one block (≤ 64 bytes) and an
// output of at most 64 bytes: one compression, no allocation. The remote
// index computes one per (keyword, message) pair and tens of thousands per
// search; @noble/hashes' blake3() builds a hasher object per call, which
// was most of an update's time. The compression itself is noble's
// (`_compress`, BLAKE2s's rounds with BLAKE3's message schedule); this file
// only frames one block as the BLAKE3 specification does (§2.1, §2.6):
// chaining value = the key, counter 0, flags CHUNK_START | CHUNK_END | ROOT |
// KEYED_HASH, then output words v[i] ^ v[i+8] and v[i+8] ^ key[i].
// Tested against noble's blake3() and a reference written from the spec.
import { _compress } from '@noble/hashes/blake2.js';

const IV = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a];
const FLAGS = 1 | 2 | 8 | 16; // CHUNK_START | CHUNK_END | ROOT | KEYED_HASH

/** BLAKE3's message schedule for its 7 rounds: the identity, permuted once per round. */
const SIGMA = (() => {
  const permutation = [2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8];
  const out: number[] = [];
  for (let i = 0, v = [...Array(16).keys()]; i < 7; i++, v = permutation.map((j) => v[j])) out.push(...v);
  return Uint8Array.from(out);
})();

const block = new Uint32Array(16);
const blockBytes = new Uint8Array(block.buffer);
const out32 = new Uint32Array(16);
const outBytes = new Uint8Array(out32.buffer);
const littleEndian = new Uint8Array(Uint16Array.of(1).buffer)[0] === 1;

/** A 32-byte key as the eight little-endian words BLAKE3 chains from. */
export function keyWords(key: Uint8Array): Uint32Array {
  if (key.length !== 32) throw new RangeError('a BLAKE3 key is 32 bytes');
  const v = new DataView(key.buffer, key.byteOffset, 32);
  return Uint32Array.from({ length: 8 }, (_, i) => v.getUint32(4 * i, true));
}

/** BLAKE3-keyed(key, input) into `out` (≤ 64 bytes), for input ≤ 64 bytes. */
export function keyedBlock(key: Uint32Array, input: Uint8Array, out: Uint8Array): Uint8Array {
  if (input.length > 64 || out.length > 64) throw new RangeError('one block in, at most 64 bytes out');
  block.fill(0);
  blockBytes.set(input);
  if (!littleEndian) for (let i = 0; i < 16; i++) block[i] = swap(block[i]);
  const k = key;
  // prettier-ignore
  const { v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15 } = _compress(
    SIGMA, 0, block, 7, k[0], k[1], k[2], k[3], k[4], k[5], k[6], k[7], IV[0], IV[1], IV[2], IV[3], 0, 0, input.length, FLAGS);
  out32[0] = v0 ^ v8;
  out32[1] = v1 ^ v9;
  out32[2] = v2 ^ v10;
  out32[3] = v3 ^ v11;
  out32[4] = v4 ^ v12;
  out32[5] = v5 ^ v13;
  out32[6] = v6 ^ v14;
  out32[7] = v7 ^ v15;
  if (out.length > 32) {
    out32[8] = k[0] ^ v8;
    out32[9] = k[1] ^ v9;
    out32[10] = k[2] ^ v10;
    out32[11] = k[3] ^ v11;
    out32[12] = k[4] ^ v12;
    out32[13] = k[5] ^ v13;
    out32[14] = k[6] ^ v14;
    out32[15] = k[7] ^ v15;
  }
  if (!littleEndian) for (let i = 0; i < 16; i++) out32[i] = swap(out32[i]);
  out.set(outBytes.subarray(0, out.length));
  return out;
}

const swap = (x: number): number => ((x << 24) | ((x << 8) & 0xff0000) | ((x >>> 8) & 0xff00) | (x >>> 24)) >>> 0;
