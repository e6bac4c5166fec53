// An independent ChaCha block function (RFC 8439 §2.3, written from the RFC
// for the known-answer tests) with any even number of rounds: at 20 it is
// checked against the RFC's vector and OpenSSL, so at 8 it is ChaCha8.
const SIGMA = [0x61707865, 0x3320646e, 0x79622d32, 0x6b206574];

const rotl = (x: number, r: number): number => ((x << r) | (x >>> (32 - r))) >>> 0;

function quarter(s: Uint32Array, a: number, b: number, c: number, d: number): void {
  s[a] += s[b];
  s[d] = rotl(s[d] ^ s[a], 16);
  s[c] += s[d];
  s[b] = rotl(s[b] ^ s[c], 12);
  s[a] += s[b];
  s[d] = rotl(s[d] ^ s[a], 8);
  s[c] += s[d];
  s[b] = rotl(s[b] ^ s[c], 7);
}

/** One 64-byte block for a 32-byte key, a 32-bit block counter and a 12-byte nonce. */
export function chachaBlock(key: Uint8Array, counter: number, nonce: Uint8Array, rounds: number): Uint8Array {
  const k = new DataView(key.buffer, key.byteOffset, 32);
  const n = new DataView(nonce.buffer, nonce.byteOffset, 12);
  const init = Uint32Array.from([
    ...SIGMA,
    ...Array.from({ length: 8 }, (_, i) => k.getUint32(4 * i, true)),
    counter >>> 0,
    ...Array.from({ length: 3 }, (_, i) => n.getUint32(4 * i, true)),
  ]);
  const s = init.slice();
  for (let r = 0; r < rounds; r += 2) {
    quarter(s, 0, 4, 8, 12); // column round
    quarter(s, 1, 5, 9, 13);
    quarter(s, 2, 6, 10, 14);
    quarter(s, 3, 7, 11, 15);
    quarter(s, 0, 5, 10, 15); // diagonal round
    quarter(s, 1, 6, 11, 12);
    quarter(s, 2, 7, 8, 13);
    quarter(s, 3, 4, 9, 14);
  }
  const out = new Uint8Array(64);
  const view = new DataView(out.buffer);
  for (let i = 0; i < 16; i++) view.setUint32(4 * i, (s[i] + init[i]) >>> 0, true);
  return out;
}

/** The keystream from block 0 on, `len` bytes. */
export function chachaKeystream(key: Uint8Array, nonce: Uint8Array, len: number, rounds: number): Uint8Array {
  const out = new Uint8Array(Math.ceil(len / 64) * 64);
  for (let b = 0; b * 64 < len; b++) out.set(chachaBlock(key, b, nonce, rounds), 64 * b);
  return out.subarray(0, len);
}
