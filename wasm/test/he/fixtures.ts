// Shared helpers of the lattice-layer tests: random models and emails, the
// plaintext reference arithmetic, and a provider/client pair.
import { randomInt } from 'node:crypto';
import {
  type BoundProviderKey,
  type ClientKeySwitchKey,
  HE_Q1,
  HE_Q2,
  type ClientModel,
  type ClientPublicKey,
  type He,
  type HeParams,
  type ProviderKey,
  loadHe,
  makeParams,
  validateParams,
} from '../../ts/he.js';
import { localSession } from './local-session.js';

export interface Setup {
  he: He;
  /** The model key s. */
  sk: ProviderKey;
  /** The user key s_u the provider decrypts with (user 1, epoch 1). */
  user: ProviderKey;
  /** The user key bound to `params`: what the provider decrypts this model's ciphertexts with. */
  decryptor: BoundProviderKey;
  params: HeParams;
  weights: Int32Array;
  model: ClientModel;
  pk: ClientPublicKey;
  ksk: ClientKeySwitchKey;
}

/** Uniform signed b_in-bit weights, (N+1)×B, row 0 = bias. */
export function randomWeights(p: HeParams, fill?: (i: number) => number): Int32Array {
  const limit = 2 ** (p.b_in - 1) - 1;
  const w = new Int32Array((p.N + 1) * p.B);
  for (let i = 0; i < w.length; i++) w[i] = fill ? fill(i) : randomInt(-limit, limit + 1);
  return w;
}

/** L distinct rows in 1..N with counts in 1..maxCount. */
export function randomEmail(N: number, L: number, maxCount: number): { rows: Uint32Array; counts: Uint32Array } {
  const chosen = new Set<number>();
  while (chosen.size < L) chosen.add(randomInt(1, N + 1));
  const rows = Uint32Array.from(chosen);
  const counts = rows.map(() => randomInt(1, maxCount + 1));
  return { rows, counts };
}

/** d_j = w_0j + Σ min(count, 2^f_in − 1)·w_fj mod 2^T, as the protocol defines it (docs/crypto.md#dot-product). */
export function plainDot(
  p: HeParams,
  w: Int32Array,
  email: { rows: Uint32Array; counts: Uint32Array },
  j: number,
): number {
  const cap = 2 ** p.f_in - 1;
  let d = BigInt(w[j]);
  email.rows.forEach((r, i) => (d += BigInt(Math.min(email.counts[i], cap)) * BigInt(w[r * p.B + j])));
  return Number(BigInt.asUintN(p.T, d));
}

/**
 * Provider key, encrypted model streamed into a client model, a session
 * public key and a user's key-switching key. Parameters are production's
 * (makeParams) unless `nonProduction` replaces some for a test of the layer's edges.
 */
export async function setup(
  opts: Parameters<typeof makeParams>[0],
  weights?: Int32Array,
  nonProduction: Partial<HeParams> = {},
): Promise<Setup> {
  const he = await loadHe();
  const sk = he.loadSecretKey(he.generateSecretKey());
  const params = validateParams({ ...makeParams(opts), ...nonProduction });
  const w = weights ?? randomWeights(params);
  const model = he.newClientModel(params);
  for (const record of sk.forContext(params).encryptModel(w)) model.push(record);
  model.finish();
  const { pk, ksk, user } = localSession(he, sk, he.randomSeed(), params.T);
  return { he, sk, user, decryptor: user.forContext(params), params, weights: w, model, pk, ksk };
}

/** What the provider decrypts minus the client's mask: d_j mod 2^T. */
export function unblind(p: HeParams, y: number, mask: number): number {
  return Number(BigInt.asUintN(p.T, BigInt(y) - BigInt(mask)));
}

/** Provider-visible noise of an LWE ciphertext: phase − 2^(Q−T)·y, centred mod 2^Q. */
export function visibleNoise(s: Setup, lwe: Uint8Array): number {
  const { Q, T } = s.params;
  const phase = s.decryptor.lwePhase(lwe);
  const y = BigInt(s.decryptor.decryptLwe(lwe));
  const e = BigInt.asIntN(Q, phase - (y << BigInt(Q - T)));
  return Number(e);
}

/**
 * Decryption-failure run (docs/crypto.md#tests): extracts `trials` times from one email of L rows
 * with maximal counts at plaintext width T; returns failures and visible noise.
 */
export async function failureRun(
  trials: number,
  L = 5000,
  T = 24,
): Promise<{ failures: number; noise: number[]; margin: number; flood: number }> {
  const s = await setup({ N: 20_000, B: 1, T, b_in: 8, f_in: 4 });
  const email = randomEmail(20_000, L, 15);
  const d = plainDot(s.params, s.weights, email, 0);
  const acc = s.model.dot(email);
  let failures = 0;
  const noise: number[] = [];
  for (let i = 0; i < trials; i++) {
    const [x] = s.model.extract(acc, [0], s.pk, s.ksk);
    if (unblind(s.params, s.decryptor.decryptLwe(x.lwe), x.mask) !== d) failures++;
    noise.push(visibleNoise(s, x.lwe));
  }
  const { Q, F } = s.params;
  const flood = 2 ** (F + Q) / Number(HE_Q1 * HE_Q2);
  return { failures, noise, margin: 2 ** (Q - T - 1), flood };
}

/** SHA-256 of the 4096 little-endian u64 coefficients expanded from seed 00..1f, per modulus q1, q2, q_ks (wasm and native builds). */
export const PINNED_EXPANSION = [
  '6636b78098817ba29b1c4af7e52a021225a216dba4241425034d578249043a3a',
  '6298f17a1f37c152fdf997df15dbc43797711728e37469760db2dbf5475eaabe',
  'd5353bed6be41e05833602e146efb028580d43f1dd25bde72266cfe650adec9f',
];

/** The same for ChaCha8 (a model record's a in package format 2), limbs q1 and q2. */
export const PINNED_EXPANSION_CHACHA8 = [
  '268e6c4b1e49a9d4abbfe1a485a4097abbe4bcc7ad6f22b244887b43b3d1abe1',
  'f2cf560442c8a5af42f30fd85d220ad87083011e92e19286bf23ddd3d875564e',
];
