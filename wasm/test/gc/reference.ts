// Independent references for the GC/OT primitives (ChaCha20 from Node's
// OpenSSL; GF(2^128) with X^128 + X^7 + X^2 + X + 1 written from the
// definition) so the SIMD/WASM code is checked against something it does not
// share code with.
import { createCipheriv } from 'node:crypto';

/**
 * The garbling hash as documented in wasm/src/gc/chacha.h: bytes 16..31 of the
 * RFC 8439 ChaCha20 block with key x ‖ "pmf-gc-hash-teda", block counter the
 * low 32 bits of the tweak and nonce (high 32 bits, 0, 0), here from OpenSSL.
 */
export function gcHash(x: Uint8Array, tweak: bigint): Uint8Array {
  const key = Buffer.concat([x, Buffer.from('pmf-gc-hash-teda')]);
  const iv = Buffer.alloc(16);
  iv.writeUInt32LE(Number(tweak & 0xffffffffn), 0);
  iv.writeUInt32LE(Number((tweak >> 32n) & 0xffffffffn), 4);
  return new Uint8Array(createCipheriv('chacha20', key, iv).update(Buffer.alloc(32)).subarray(16, 32));
}

const MASK128 = (1n << 128n) - 1n;

export function toBig(b: Uint8Array): bigint {
  let v = 0n;
  for (let i = b.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(b[i]);
  return v;
}

export function fromBig(v: bigint, n = 16): Uint8Array {
  const out = new Uint8Array(n);
  for (let i = 0; i < n; i++) out[i] = Number((v >> BigInt(8 * i)) & 0xffn);
  return out;
}

/** a * b in GF(2^128), bit i = coefficient of X^i, schoolbook. */
export function gfMul(a: bigint, b: bigint): bigint {
  let p = 0n;
  for (let i = 0; i < 128; i++) if ((b >> BigInt(i)) & 1n) p ^= a << BigInt(i);
  for (let i = 254; i >= 128; i--) {
    if ((p >> BigInt(i)) & 1n) p ^= (1n << BigInt(i)) | (0x87n << BigInt(i - 128));
  }
  return p & MASK128;
}

/** A uniform `bits`-bit test value (Math.random suffices for test inputs). */
export const rand = (bits: number): number => Math.floor(Math.random() * 2 ** bits);

/** The two's-complement value of a T-bit word: the plaintext the circuits compare. */
export const signed = (v: number, T: number): number => (v >= 2 ** (T - 1) ? v - 2 ** T : v);
