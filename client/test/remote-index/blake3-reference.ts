// BLAKE3 written from its specification (O'Connor, Aumasson, Neves,
// Wilcox-O'Hearn, "BLAKE3", 2020, §2), for inputs of one chunk (≤ 1024
// bytes), as an independent reference for the remote index's derivations:
// slow and plain on purpose, sharing no code with @noble/hashes.
const IV = [0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19];
const PERMUTATION = [2, 6, 3, 10, 7, 0, 4, 13, 1, 11, 12, 5, 9, 14, 15, 8];
const CHUNK_START = 1;
const CHUNK_END = 2;
const ROOT = 8;
const KEYED_HASH = 16;
const DERIVE_KEY_CONTEXT = 32;
const DERIVE_KEY_MATERIAL = 64;

const rotr = (x: number, n: number): number => ((x >>> n) | (x << (32 - n))) >>> 0;

function g(s: number[], a: number, b: number, c: number, d: number, x: number, y: number): void {
  s[a] = (s[a] + s[b] + x) >>> 0;
  s[d] = rotr(s[d] ^ s[a], 16);
  s[c] = (s[c] + s[d]) >>> 0;
  s[b] = rotr(s[b] ^ s[c], 12);
  s[a] = (s[a] + s[b] + y) >>> 0;
  s[d] = rotr(s[d] ^ s[a], 8);
  s[c] = (s[c] + s[d]) >>> 0;
  s[b] = rotr(s[b] ^ s[c], 7);
}

/** The compression function: 16 output words. */
function compress(cv: number[], block: number[], counter: number, blockLen: number, flags: number): number[] {
  const s = [...cv, IV[0], IV[1], IV[2], IV[3], counter >>> 0, Math.floor(counter / 2 ** 32), blockLen, flags];
  let m = [...block];
  for (let round = 0; round < 7; round++) {
    g(s, 0, 4, 8, 12, m[0], m[1]);
    g(s, 1, 5, 9, 13, m[2], m[3]);
    g(s, 2, 6, 10, 14, m[4], m[5]);
    g(s, 3, 7, 11, 15, m[6], m[7]);
    g(s, 0, 5, 10, 15, m[8], m[9]);
    g(s, 1, 6, 11, 12, m[10], m[11]);
    g(s, 2, 7, 8, 13, m[12], m[13]);
    g(s, 3, 4, 9, 14, m[14], m[15]);
    m = PERMUTATION.map((i) => m[i]);
  }
  for (let i = 0; i < 8; i++) {
    s[i] = (s[i] ^ s[i + 8]) >>> 0;
    s[i + 8] = (s[i + 8] ^ cv[i]) >>> 0;
  }
  return s;
}

const words = (b: Uint8Array): number[] =>
  Array.from(
    { length: b.length / 4 },
    (_, i) => (b[4 * i] | (b[4 * i + 1] << 8) | (b[4 * i + 2] << 16) | (b[4 * i + 3] << 24)) >>> 0,
  );

/** One chunk hashed from `cv` with `mode`, `outLen` bytes of the root's output. */
function hashChunk(input: Uint8Array, cv: number[], mode: number, outLen: number): Uint8Array {
  if (input.length > 1024) throw new Error('the reference handles one chunk only');
  const blocks = Math.max(1, Math.ceil(input.length / 64));
  let chain = cv;
  for (let b = 0; b < blocks - 1; b++) {
    const block = words(input.subarray(64 * b, 64 * b + 64));
    chain = compress(chain, block, 0, 64, mode | (b === 0 ? CHUNK_START : 0)).slice(0, 8);
  }
  const last = new Uint8Array(64);
  const tail = input.subarray(64 * (blocks - 1));
  last.set(tail);
  const flags = mode | CHUNK_END | ROOT | (blocks === 1 ? CHUNK_START : 0);
  const out = new Uint8Array(outLen);
  for (let t = 0; 64 * t < outLen; t++) {
    const w = compress(chain, words(last), t, tail.length, flags);
    for (let i = 0; i < 64 && 64 * t + i < outLen; i++) out[64 * t + i] = (w[i >> 2] >>> (8 * (i & 3))) & 0xff;
  }
  return out;
}

export function referenceKeyed(key: Uint8Array, input: Uint8Array, outLen: number): Uint8Array {
  return hashChunk(input, words(key), KEYED_HASH, outLen);
}

export function referenceDeriveKey(context: string, material: Uint8Array, outLen: number): Uint8Array {
  const contextKey = hashChunk(new TextEncoder().encode(context), IV, DERIVE_KEY_CONTEXT, 32);
  return hashChunk(material, words(contextKey), DERIVE_KEY_MATERIAL, outLen);
}

export function referenceHash(input: Uint8Array, outLen = 32): Uint8Array {
  return hashChunk(input, IV, 0, outLen);
}
