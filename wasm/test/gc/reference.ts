// Independent scalar references for the GC/OT primitives, written from the
// specifications (RFC 8439 for ChaCha; GF(2^128) with X^128 + X^7 + X^2 + X + 1)
// so the SIMD/WASM code is checked against something it does not share code with.

const rotl = (v: number, c: number): number => ((v << c) | (v >>> (32 - c))) >>> 0;

/** One ChaCha block with `rounds` rounds: 16 input words → 64 output bytes. */
export function chachaBlock(state: Uint32Array, rounds: number): Uint8Array {
  const x = Uint32Array.from(state);
  const qr = (a: number, b: number, c: number, d: number): void => {
    x[a] = (x[a] + x[b]) >>> 0;
    x[d] = rotl(x[d] ^ x[a], 16);
    x[c] = (x[c] + x[d]) >>> 0;
    x[b] = rotl(x[b] ^ x[c], 12);
    x[a] = (x[a] + x[b]) >>> 0;
    x[d] = rotl(x[d] ^ x[a], 8);
    x[c] = (x[c] + x[d]) >>> 0;
    x[b] = rotl(x[b] ^ x[c], 7);
  };
  for (let r = 0; r < rounds; r += 2) {
    qr(0, 4, 8, 12);
    qr(1, 5, 9, 13);
    qr(2, 6, 10, 14);
    qr(3, 7, 11, 15);
    qr(0, 5, 10, 15);
    qr(1, 6, 11, 12);
    qr(2, 7, 8, 13);
    qr(3, 4, 9, 14);
  }
  const out = new Uint8Array(64);
  const dv = new DataView(out.buffer);
  for (let i = 0; i < 16; i++) dv.setUint32(4 * i, (x[i] + state[i]) >>> 0, true);
  return out;
}

const words = (b: Uint8Array): number[] =>
  Array.from({ length: b.length / 4 }, (_, i) => new DataView(b.buffer, b.byteOffset).getUint32(4 * i, true));

/** The garbling hash as documented in wasm/src/gc/chacha.h. */
export function gcHash(x: Uint8Array, tweak: bigint, rounds = 8): Uint8Array {
  const sigma = words(new TextEncoder().encode('expand 32-byte k'));
  const kgc = words(new TextEncoder().encode('pmf-gc-hash-teda'));
  const st = Uint32Array.from([
    ...sigma,
    ...words(x),
    ...kgc,
    Number(tweak & 0xffffffffn),
    Number((tweak >> 32n) & 0xffffffffn),
    0,
    0,
  ]);
  return chachaBlock(st, rounds).slice(16, 32);
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
