// The LWE ciphertext layout, written by hand for tests that forge ciphertexts
// (wasm/src/he/scheme.h): tag 'L', version 3, Q, then b' at Q bits and each
// a'[k] at Q − 1 bits, little-endian, zero padding.
export const LWE_VERSION = 3;

/** The packed layout's header (docs/crypto.md#packed-extraction): tag 'M', version 1, Q, count (u16 LE). */
export const packedHeader = (Q: number, count: number): number[] => [0x4d, 1, Q, count & 0xff, count >> 8];

/** Packs b' and the a-part (a'[k] in units of 2^(Q−1), i.e. half its weight modulo 2^Q). */
export function packLwe(b: bigint, a: bigint[], Q: number): Uint8Array {
  let acc = b;
  a.forEach((v, k) => (acc |= v << BigInt(Q + (Q - 1) * k)));
  const body = new Uint8Array(Math.ceil((Q + (Q - 1) * a.length) / 8));
  for (let i = 0; i < body.length; i++) body[i] = Number((acc >> BigInt(8 * i)) & 0xffn);
  return new Uint8Array([0x4c, LWE_VERSION, Q, ...body]);
}
