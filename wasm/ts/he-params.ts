// Lattice parameters (docs/crypto.md#parameters) and the sizes that follow
// from them. HeContext is the parameters validated once, as SEAL's
// SEALContext: client models and provider keys (forContext) are bound to one.
import { FLOOD_MARGIN_BITS, MAX_FIN, MAX_Q, MAX_T, MIN_T, Q_MINUS_T, maxFloodBits } from './limits.js';

/** Lattice and model parameters, as carried in the model package header (docs/crypto.md#parameters, docs/wire-formats.md#model-package). */
export interface HeParams {
  n: number;
  /** Decimal strings: the primes exceed 2^53. */
  q1: string;
  q2: string;
  /** Plaintext modulus 2^T, MIN_T ≤ T ≤ MAX_T. */
  T: number;
  /** LWE output modulus 2^Q. */
  Q: number;
  /** Flooding noise uniform in [−2^F, 2^F). */
  F: number;
  /** Weights are signed b_in-bit integers: |w| ≤ 2^(b_in−1) − 1. */
  b_in: number;
  /** Feature counts are capped at 2^f_in − 1. */
  f_in: number;
  /** Columns (categories); 1 for binary classifiers. */
  B: number;
  /** Feature rows; the model has N + 1 rows, row 0 being the bias. */
  N: number;
}

export const HE_N = 4096;
/** Dimension of the client's LWE ciphertexts: the user keys live in the subring R_2048 ↪ R_4096 (wasm/src/he/keyswitch.h). */
export const HE_LWE_N = HE_N / 2;
export const HE_Q1 = 18014359854776321n; // 0x3ffff700000001 = (2^22 − 9)·2^32 + 1
export const HE_Q2 = 18014123631575041n; // 0x3fffc000000001 = (2^22 − 64)·2^32 + 1
/** The key-switch modulus: the user-key instance's (wasm/src/he/keyswitch.h), 2^50 − 2^14 + 1. */
export const HE_QKS = 1125899906826241n;
export const A_BYTES_PER_CT = 2 * HE_N * 8;
/** Default ceiling for caching expanded a polynomials in memory (see newClientModel). */
export const CACHE_A_DEFAULT_LIMIT = 256 * 2 ** 20;
/**
 * Rounds of the XOF that expands a model record's a from its seed
 * (docs/crypto.md#samplers-and-seed-expansion): ChaCha8 in the packages a
 * provider builds (format 2), ChaCha20 in format 1, which clients still read.
 */
export type ModelARounds = 8 | 20;
export const MODEL_A_ROUNDS: ModelARounds = 8;
export const LEGACY_MODEL_A_ROUNDS: ModelARounds = 20;
/** Bytes of a seed: a model record's a, p1's, a KSK's a-parts'. */
export const SEED_BYTES = 32;

/**
 * The one mapping from a model's shape to lattice parameters, used by the
 * provider's packages, the client, the benches and the tests alike:
 * Q = T + Q_MINUS_T and the largest flood F the margin allows
 * (docs/crypto.md#parameters). T defaults to 24, b_in to 8, f_in to 4.
 */
export function makeParams(p: { N: number; B: number; T?: number; b_in?: number; f_in?: number }): HeParams {
  const T = p.T ?? 24;
  return validateParams({
    n: HE_N,
    q1: HE_Q1.toString(),
    q2: HE_Q2.toString(),
    T,
    Q: T + Q_MINUS_T,
    F: maxFloodBits(T),
    b_in: p.b_in ?? 8,
    f_in: p.f_in ?? 4,
    B: p.B,
    N: p.N,
  });
}

/** Lattice parameters for a plain model's header (models/plain): the mapping every package uses. */
export function paramsFromHeader(h: { N: number; B: number; T: number; b_in: number; f_in: number }): HeParams {
  return makeParams({ N: h.N, B: h.B, T: h.T, b_in: h.b_in, f_in: h.f_in });
}

/**
 * A received package's parameters, which must be exactly paramsFromHeader of
 * its own shape: the client never runs at a Q or flood F a provider picked
 * otherwise (a smaller F would hide less of the email's noise).
 */
export function packageParams(p: HeParams): HeParams {
  const want = paramsFromHeader(p);
  for (const k of Object.keys(want) as (keyof HeParams)[])
    if (p[k] !== want[k]) throw new Error(`lattice params: ${k} is ${String(p[k])}, packages use ${String(want[k])}`);
  return want;
}

/** Throws a clear Error naming the first parameter this layer cannot use. */
export function validateParams(p: HeParams): HeParams {
  const int = (k: keyof HeParams, lo: number, hi: number): void => {
    const v = p[k];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi)
      throw new Error(`lattice params: ${k} must be an integer in [${lo}, ${hi}], got ${String(v)}`);
  };
  int('n', HE_N, HE_N);
  if (p.q1 !== HE_Q1.toString() || p.q2 !== HE_Q2.toString())
    throw new Error('lattice params: q1, q2 are not the frozen primes of this build');
  int('T', MIN_T, MAX_T);
  int('Q', p.T + Q_MINUS_T, MAX_Q);
  int('F', FLOOD_MARGIN_BITS + 1, maxFloodBits(p.T));
  int('b_in', 2, p.T);
  int('f_in', 1, MAX_FIN);
  int('B', 1, HE_N);
  int('N', 1, 2 ** 32 - 2);
  return p;
}

/** What heLayout returns. */
export interface HeLayout {
  rowsPerCt: number;
  ctCount: number;
  recordBytes: number;
  bodyBytes: number;
  lweBytes: number;
}

/** Sizes that follow from the parameters (docs/crypto.md#model-encryption-and-packing, docs/crypto.md#extraction-pipeline). */
export function heLayout(p: HeParams): HeLayout {
  const rowsPerCt = Math.floor(HE_N / p.B);
  const ctCount = Math.ceil((p.N + 1) / rowsPerCt);
  const recordBytes = SEED_BYTES + (2 * HE_N * 54) / 8;
  return {
    rowsPerCt,
    ctCount,
    recordBytes,
    bodyBytes: ctCount * recordBytes,
    // b' at Q bits, the a-part at Q − 1 (wasm/src/he/scheme.h, lwe_bytes)
    lweBytes: 3 + Math.ceil((p.Q + HE_LWE_N * (p.Q - 1)) / 8),
  };
}

/**
 * The key switch's gadget for plaintext bits T (wasm/src/he/keyswitch.h,
 * ks_gadget): the a-part is rounded to 2^inBits and cut into `digits` digits
 * of baseBits bits; the KSK carries one polynomial modulo q_ks per digit.
 */
export function ksGadget(T: number): { inBits: number; baseBits: number; digits: number } {
  const inBits = T + 12;
  const baseBits = 2 * T + 12 <= 36 ? inBits : 36 - T;
  return { inBits, baseBits, digits: Math.ceil(inBits / baseBits) };
}

/** The key-switching key's layout (kKskVersion, wasm/src/he/keyswitch.h): 3 switches modulo q_ks with ksGadget(T). */
export const KSK_LAYOUT = 3;

/** Bytes of a user's key-switching key for plaintext bits T: tag, version, T, seed, 50-bit packed b per digit. */
export function keySwitchKeyBytes(T: number): number {
  return 3 + SEED_BYTES + (ksGadget(T).digits * HE_N * 50) / 8;
}

/**
 * Bytes of one packed ciphertext for coefficients 0..count−1: a 5-byte header,
 * count b' values at Q bits, the whole switched a-part (n values) at Q − 1
 * (wasm/src/he/scheme.h, packed_bytes_for; docs/crypto.md#packed-extraction).
 */
export function packedBytes(p: HeParams, count: number): number {
  return 5 + Math.ceil((count * p.Q + HE_N * (p.Q - 1)) / 8);
}

/**
 * How a topic_request carries its B' values: one packed ciphertext when the
 * candidates are every topic (B' = B, a public set), else B' separately
 * re-randomized LWE ciphertexts so the provider cannot link them to the
 * secret candidate set (docs/crypto.md#packed-extraction).
 */
export function topicCiphertexts(p: HeParams, bPrime: number): { packed: boolean; bytes: number } {
  return bPrime === p.B
    ? { packed: true, bytes: packedBytes(p, bPrime) }
    : { packed: false, bytes: bPrime * heLayout(p).lweBytes };
}

/**
 * Parameters validated once, with their layout: what a ClientModel or a
 * BoundProviderKey is bound to when it is made, so no later call can hand it
 * other parameters.
 */
export class HeContext {
  readonly params: Readonly<HeParams>;
  readonly layout: Readonly<HeLayout>;
  private constructor(p: HeParams) {
    this.params = Object.freeze({ ...validateParams(p) });
    this.layout = Object.freeze(heLayout(this.params));
  }
  /** The context of these parameters (validated here), or the context itself. */
  static of(p: HeParams | HeContext): HeContext {
    return p instanceof HeContext ? p : new HeContext(p);
  }
}
