// Bounds of the crypto layer, said once: the lattice parameters a package may
// carry and the widths the garbled comparison handles. Each mirrors a C++
// constant (wasm/src/he/ring.h) that wasm/test/he-params.test.ts checks
// against the build. Pure constants: the models and protocol code import
// them without loading wasm.

/** Smallest plaintext width 2^T. */
export const MIN_T = 2;
/** Largest plaintext width (ring.h kMaxT): the garbled circuits and u32 plaintexts. */
export const MAX_T = 32;
/** Largest LWE modulus 2^Q (ring.h kMaxQ): the switch from the key-switch modulus q_ks needs 2^Q < q_ks. */
export const MAX_Q = 49;
/**
 * Q − T of every package (ring.h kMinQMinusT): decryption margin
 * 2^(Q−T−1) = 256 against the modulus switch's rounding noise (σ ≤ 26), the
 * key switch's (σ ≤ 6.7) and the flood (≤ 32 after the switch).
 */
export const Q_MINUS_T = 9;
/** Honest noise must stay 2^50 below the flood (ring.h kFloodMarginBits): ≤ 2^-51 per ciphertext. */
export const FLOOD_MARGIN_BITS = 50;
/** Largest flood exponent for T (ring.h max_flood_bits): an eighth of the decryption margin after the switch. */
export const maxFloodBits = (T: number): number => (T >= 4 ? 104 - T : 100);
/** Feature counts are capped at 2^f_in − 1 with f_in at most this. */
export const MAX_FIN = 10;
