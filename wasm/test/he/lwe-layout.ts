// The LWE ciphertext layout, written by hand for tests that forge ciphertexts
// (wasm/src/he/scheme.h): tag 'L', version 3, Q, then b' at Q bits and each
// a'[k] at Q − 1 bits, little-endian, zero padding.
export const LWE_VERSION = 3;

/** The packed layout's header (docs/crypto.md#packed-extraction): tag 'M', version 1, Q, count (u16 LE). */
export const packedHeader = (Q: number, count: number): number[] => [0x4d, 1, Q, count & 0xff, count >> 8];

/** Packs b' and the a-part (a'[k] in units of 2^(Q−1), i.e. half its weight modulo 2^Q). */
export function packLwe(b: bigint, a: bigint[], Q: number): Uint8Array {
  const out = new Uint8Array(3 + Math.ceil((Q + (Q - 1) * a.length) / 8));
  out.set([0x4c, LWE_VERSION, Q]);
  // A 64-bit window, written out a byte at a time (one big integer would make this quadratic).
  let at = 3;
  let acc = 0n;
  let have = 0;
  const put = (v: bigint, width: number) => {
    acc |= v << BigInt(have);
    for (have += width; have >= 8; have -= 8, acc >>= 8n) out[at++] = Number(acc & 0xffn);
  };
  put(b, Q);
  for (const v of a) put(v, Q - 1);
  if (have) out[at] = Number(acc);
  return out;
}
