// Typed API of the lattice layer (docs/crypto.md, C++ in wasm/src/he/).
// Bytes in, bytes out: nothing here knows about transport or storage.
//
//   provider: generateSecretKey → loadSecretKey → publicKeyFor / encryptModel
//             → userKey(user, epoch): keySwitchKey() for the client, decryptLwe
//   client:   newClientModel(params).push(body chunks…).finish()
//             → dot(features) → extract(acc, indices, loadPublicKey(p0, providerSeed, clientNonce),
//                                       loadKeySwitchKey(ksk))
//
// Only the `lwe` byte strings returned by extract() may leave the client; the
// accumulator, masks and every intermediate value stay on the device.
import { hkdf } from '@noble/hashes/hkdf.js';
import { hmac } from '@noble/hashes/hmac.js';
import { concatBytes } from '@noble/hashes/utils.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { loadCore, type WasmCore } from './core.js';
import { check, CoreError, Status } from './status.js';
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
const A_BYTES_PER_CT = 2 * HE_N * 8;
/** Default ceiling for caching expanded a polynomials in memory (see newClientModel). */
export const CACHE_A_DEFAULT_LIMIT = 256 * 2 ** 20;
const SEED_BYTES = 32;

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

/** Sizes that follow from the parameters (docs/crypto.md#model-encryption-and-packing, docs/crypto.md#extraction-pipeline). */
export function heLayout(p: HeParams): {
  rowsPerCt: number;
  ctCount: number;
  recordBytes: number;
  bodyBytes: number;
  lweBytes: number;
} {
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

/** Frees wasm handles of objects the caller forgot to dispose (secrets are wiped by the C++ free). */
const finalizer = new FinalizationRegistry<() => void>((release) => release());

abstract class Handle {
  protected ptr: number;
  private readonly token = {};
  constructor(
    protected readonly core: WasmCore,
    ptr: number,
    private readonly freeName: string,
  ) {
    this.ptr = ptr;
    finalizer.register(this, () => core.fn(freeName)(ptr), this.token);
  }
  /** The wasm pointer (internal to this module's classes). */
  live(): number {
    if (this.ptr === 0) throw new Error('lattice object used after dispose()');
    return this.ptr;
  }
  /** Frees (and for secrets wipes) the wasm-side object now. */
  dispose(): void {
    if (this.ptr === 0) return;
    finalizer.unregister(this.token);
    this.core.fn(this.freeName)(this.ptr);
    this.ptr = 0;
  }
}

/** Runs fn with a 4-byte out-slot for a status code. */
function withStatus<T>(core: WasmCore, fn: (statusPtr: number) => T): [T, number] {
  const sp = core.alloc(4);
  try {
    const r = fn(sp);
    return [r, new DataView(core.heap.buffer).getInt32(sp, true)];
  } finally {
    core.free(sp);
  }
}

function bytes32(b: Uint8Array, what: string): Uint8Array {
  if (!(b instanceof Uint8Array) || b.length !== SEED_BYTES) throw new Error(`${what} must be ${SEED_BYTES} bytes`);
  return b;
}

/** p1's seed, H("pmf-he-pk-v1" ‖ provider_seed ‖ client_nonce) with SHA-256 (docs/crypto.md#per-session-public-key). */
export function publicKeySeed(providerSeed: Uint8Array, clientNonce: Uint8Array): Uint8Array {
  const tag = new TextEncoder().encode('pmf-he-pk-v1');
  const h = sha256.create();
  h.update(tag).update(bytes32(providerSeed, 'providerSeed')).update(bytes32(clientNonce, 'clientNonce'));
  return h.digest();
}

const te = new TextEncoder();
const u32be = (v: number): Uint8Array => {
  if (!Number.isInteger(v) || v < 0 || v > 0xffffffff) throw new Error(`key derivation: ${v} is not a u32`);
  return new Uint8Array([v >>> 24, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff]);
};

/**
 * The provider's deterministic seeds: HMAC-SHA-256 under a key derived from
 * the key file (HKDF), over a purpose label and public inputs. Determinism is
 * the point: a repeated request must get the identical answer (docs/crypto.md#per-session-public-key).
 */
class SeedDeriver {
  private key: Uint8Array;
  constructor(keyFile: Uint8Array) {
    this.key = hkdf(sha256, keyFile, te.encode('pmf-provider-prf-v1'), new Uint8Array(0), 32);
  }
  seed(label: string, ...parts: Uint8Array[]): Uint8Array {
    return hmac(sha256, this.key, concatBytes(te.encode(label), ...parts));
  }
  wipe(): void {
    this.key.fill(0);
  }
}

/**
 * Which per-user key a provider decrypts with: one per (account salt, epoch)
 * per model version. The salt is 32 random bytes the provider draws when it
 * creates the account and never reuses, so a deleted and re-created account,
 * or one given a freed id, never gets a key derived before
 * (docs/crypto.md#deterministic-provider-randomness).
 */
export interface UserKeyId {
  salt: Uint8Array;
  epoch: number;
}

/** The derivation inputs of a user key and its KSK: providerSeed ‖ salt ‖ u32be(epoch). */
const userKeyInputs = (providerSeed: Uint8Array, id: UserKeyId): Uint8Array[] => [
  bytes32(providerSeed, 'providerSeed'),
  bytes32(id.salt, 'user key salt'),
  u32be(id.epoch),
];

/**
 * A reusable wasm buffer for public inputs (LWE ciphertexts to decrypt, model
 * body records), instead of malloc + copy + wipe + free per call. JS is
 * single-threaded per realm, so one per module instance is enough.
 */
const scratch = new WeakMap<WasmCore, { ptr: number; size: number }>();
function publicInput(core: WasmCore, data: Uint8Array): number {
  let s = scratch.get(core);
  if (!s || s.size < data.length) {
    if (s) core.free(s.ptr);
    s = { ptr: core.alloc(data.length + 4), size: data.length + 4 };
    scratch.set(core, s);
  }
  core.heap.set(data, s.ptr);
  return s.ptr;
}

export class ProviderKey extends Handle {
  private readonly out = new Uint32Array(2); // [y or phase lo, phase hi]

  /** `seeds` only for the model key loaded from its file (user keys derive nothing). */
  constructor(
    core: WasmCore,
    ptr: number,
    private readonly seeds?: SeedDeriver,
  ) {
    super(core, ptr, 'pmf_he_sk_free');
  }

  override dispose(): void {
    this.seeds?.wipe();
    super.dispose();
  }

  private deriver(): SeedDeriver {
    if (!this.seeds) throw new Error('only the model key derives public and user keys');
    return this.seeds;
  }

  private call(name: string, lwe: Uint8Array, ...args: number[]): void {
    const core = this.core;
    if (!(lwe instanceof Uint8Array)) throw new Error('LWE ciphertext: must be a Uint8Array');
    const inp = publicInput(core, lwe);
    const out = core.alloc(8);
    try {
      check(core.fn(name)(this.live(), inp, lwe.length, ...args, out), 'LWE ciphertext');
      this.out.set(new Uint32Array(core.heap.buffer, out, 2));
    } finally {
      core.wipeAndFree(out, 8);
    }
  }

  /** b' + <a', s> mod 2^Q of an LWE ciphertext (what decryption rounds; its noise, for tests). */
  lwePhase(lwe: Uint8Array, p: HeParams): bigint {
    this.call('pmf_he_lwe_phase', lwe, p.Q);
    const v = (BigInt(this.out[1]) << 32n) | BigInt(this.out[0]);
    this.out.fill(0);
    return v;
  }

  /** y = d_j + r_j mod 2^T (docs/crypto.md#decryption), uniform to the provider. Cost: one length-n inner product. */
  decryptLwe(lwe: Uint8Array, p: HeParams): number {
    this.call('pmf_he_decrypt', lwe, p.T, p.Q);
    const y = this.out[0];
    this.out.fill(0);
    return y;
  }

  /**
   * y_j = d_j + r_j mod 2^T for j < count from one packed ciphertext
   * (docs/crypto.md#packed-extraction). Cost: count length-n/2 inner products,
   * as for count LWE ciphertexts.
   */
  decryptPacked(ciphertext: Uint8Array, p: HeParams, count: number): Uint32Array {
    const core = this.core;
    if (!(ciphertext instanceof Uint8Array)) throw new Error('packed ciphertext: must be a Uint8Array');
    if (!Number.isInteger(count) || count < 1 || count > p.B)
      throw new Error(`packed ciphertext: count ${count} is not in [1, ${p.B}]`);
    const inp = publicInput(core, ciphertext);
    const out = core.alloc(4 * count);
    try {
      check(
        core.fn('pmf_he_decrypt_packed')(this.live(), inp, ciphertext.length, p.T, p.Q, count, out),
        'packed ciphertext',
      );
      return new Uint32Array(core.heap.buffer, out, count).slice();
    } finally {
      core.wipeAndFree(out, 4 * count);
    }
  }

  /**
   * A topic_request's y_1..y_B' (docs/protocol.md#topic-extraction), laid out
   * as `topicCiphertexts` says: one packed ciphertext, or B' LWE ciphertexts.
   */
  decryptTopics(ciphertexts: Uint8Array, p: HeParams, bPrime: number): Uint32Array {
    const { packed, bytes } = topicCiphertexts(p, bPrime);
    if (ciphertexts.length !== bytes)
      throw new RangeError(`topic ciphertexts: wrong length (${ciphertexts.length} bytes, expected ${bytes})`);
    if (packed) return this.decryptPacked(ciphertexts, p, bPrime);
    const size = heLayout(p).lweBytes;
    return Uint32Array.from({ length: bPrime }, (_, j) =>
      this.decryptLwe(ciphertexts.subarray(j * size, (j + 1) * size), p),
    );
  }

  /**
   * p0 = −(p1·s + e) for one client (docs/crypto.md#per-session-public-key). e is a PRF of the provider's
   * secret over (provider seed, nonce): the same nonce always gets the same
   * p0, so repeating a nonce to average e away gains nothing.
   */
  publicKeyFor(providerSeed: Uint8Array, clientNonce: Uint8Array): Uint8Array {
    const core = this.core;
    const size = core.fn('pmf_he_layout')(2);
    const p1Seed = publicKeySeed(providerSeed, clientNonce);
    const eSeed = this.deriver().seed('pmf-he-pk-e-v1', providerSeed, clientNonce);
    try {
      return core.withBuffers([p1Seed, eSeed], (sp, ep) => {
        const out = core.alloc(size);
        try {
          check(core.fn('pmf_he_public_key')(this.live(), sp, ep, out), 'public key');
          return core.copyOut(out, size);
        } finally {
          core.free(out);
        }
      });
    } finally {
      eSeed.fill(0);
    }
  }

  /** The user key s_u of (account salt, epoch) under this model key: it decrypts that user's ciphertexts. */
  userKey(providerSeed: Uint8Array, id: UserKeyId): ProviderKey {
    const core = this.core;
    const size = core.fn('pmf_he_layout')(1);
    // v3: a random account salt replaced the numeric user id, which SQLite could hand out again.
    const seed = this.deriver().seed('pmf-he-user-sk-v3', ...userKeyInputs(providerSeed, id));
    const out = core.alloc(size);
    try {
      core.withBuffers([seed], (sp) => core.fn('pmf_he_sk_derive_user')(sp, out));
      const [ptr, st] = withStatus(core, (stp) => core.fn('pmf_he_sk_load')(out, size, stp));
      check(st, 'user key');
      return new ProviderKey(core, ptr);
    } finally {
      seed.fill(0);
      core.wipeAndFree(out, size);
    }
  }

  /**
   * The key-switching key from this model key to `user` (wasm/src/he/keyswitch.h):
   * what the client needs to switch its ciphertexts to s_u. Deterministic per
   * (account salt, epoch): its errors come from the provider's PRF, so asking again
   * returns the same bytes and averages nothing away.
   */
  keySwitchKey(providerSeed: Uint8Array, user: ProviderKey, id: UserKeyId, T: number): Uint8Array {
    const core = this.core;
    const size = core.fn('pmf_he_ksk_bytes')(T);
    if (size < 0) throw new Error(`key-switching key: T = ${T} is not in [1, 32]`);
    const parts = userKeyInputs(providerSeed, id);
    const aSeed = this.deriver().seed('pmf-he-ksk-a-v3', ...parts);
    const eSeed = this.deriver().seed('pmf-he-ksk-e-v3', ...parts);
    try {
      return core.withBuffers([aSeed, eSeed], (ap, ep) => {
        const out = core.alloc(size);
        try {
          check(core.fn('pmf_he_ksk_generate')(this.live(), user.live(), T, ap, ep, out), 'key-switching key');
          return core.copyOut(out, size);
        } finally {
          core.free(out);
        }
      });
    } finally {
      eSeed.fill(0);
    }
  }

  /**
   * Encrypts the model row by row, yielding one ciphertext record (32-byte
   * seed ‖ bit-packed b, heLayout(p).recordBytes) at a time, so a 5M-row model
   * never needs all ciphertexts in memory. `weights` is the (N+1)×B matrix in
   * row-major order, row 0 = bias, either whole or as chunks of whole rows.
   */
  *encryptModel(p: HeParams, weights: Int32Array | Iterable<Int32Array>): Generator<Uint8Array> {
    validateParams(p);
    const core = this.core;
    const { rowsPerCt, recordBytes } = heLayout(p);
    const limit = 2 ** (p.b_in - 1) - 1;
    const tmask = p.T === 32 ? 0xffffffff : 2 ** p.T - 1;
    const total = (p.N + 1) * p.B;
    const perCt = rowsPerCt * p.B;
    const msg = core.alloc(HE_N * 4);
    const out = core.alloc(recordBytes);
    const plain = new Uint32Array(HE_N);
    let filled = 0; // weights placed in the current ciphertext
    let seen = 0;
    const flush = (): Uint8Array => {
      core.heap.set(new Uint8Array(plain.buffer), msg);
      check(core.fn('pmf_he_encrypt_record')(this.live(), msg, p.T, out), 'model encryption');
      plain.fill(0);
      filled = 0;
      return core.copyOut(out, recordBytes);
    };
    try {
      for (const chunk of weights instanceof Int32Array ? [weights] : weights) {
        for (let i = 0; i < chunk.length; i++) {
          const w = chunk[i];
          if (seen >= total) throw new Error(`model weights: more than (N+1)·B = ${total} values`);
          if (!(w >= -limit && w <= limit))
            throw new Error(`model weights: value ${seen} is outside ±${limit} (b_in = ${p.b_in})`);
          plain[filled++] = (w & tmask) >>> 0; // two's complement mod 2^T (docs/crypto.md#dot-product)
          seen++;
          if (filled === perCt) yield flush();
        }
      }
      if (seen !== total) throw new Error(`model weights: got ${seen} values, expected (N+1)·B = ${total}`);
      if (filled > 0) yield flush();
    } finally {
      core.wipeAndFree(msg, HE_N * 4);
      core.free(out);
      plain.fill(0);
    }
  }
}

export class ClientPublicKey extends Handle {}

/** The client's loaded key-switching key for one plaintext width T (NTT form in wasm memory: 128 KiB per digit). */
export class ClientKeySwitchKey extends Handle {
  constructor(
    core: WasmCore,
    ptr: number,
    /** The plaintext bits it was made for: it serves only models of that T. */
    readonly T: number,
  ) {
    super(core, ptr, 'pmf_he_ksk_free');
  }

  /** Throws unless this key serves a model with these parameters. */
  checkServes(p: HeParams): void {
    if (this.T !== p.T) throw new Error(`key-switching key: made for T = ${this.T}, the model has T = ${p.T}`);
  }
}

/** Output of ClientModel.dot: stays on the device, never serialized. */
export class Accumulator extends Handle {}

export interface Features {
  /** Feature rows, 1..N (row 0, the bias, is always added with x = 1: do not pass it). */
  rows: Uint32Array;
  /** Counts ≥ 1, same length; capped here at 2^f_in − 1 (docs/crypto.md#dot-product). */
  counts: Uint32Array;
}

export interface Extracted {
  /** Coefficient (category) index j. */
  index: number;
  /** Bit-packed LWE ciphertext: the only thing that leaves the device. */
  lwe: Uint8Array;
  /** r_j in [0, 2^T): the provider decrypts y = d_j + r_j; the client keeps r_j. */
  mask: number;
}

/**
 * The encrypted model on the client. Build it from the package body in chunks
 * of any size (push), then finish(). By default the a polynomials are
 * expanded from their seeds once while loading and cached (64 KiB per
 * ciphertext); with cacheA = false they are expanded on demand at every dot
 * product (slower per email, half the memory).
 */
export class ClientModel extends Handle {
  private pending = new Uint8Array(0);
  private received = 0;
  private failed = false;
  private readonly layout: ReturnType<typeof heLayout>;

  constructor(
    core: WasmCore,
    ptr: number,
    readonly params: HeParams,
    readonly cacheA: boolean,
  ) {
    super(core, ptr, 'pmf_he_model_free');
    this.layout = heLayout(params);
  }

  get complete(): boolean {
    return !this.failed && this.received === this.layout.ctCount;
  }

  /** Feeds the next bytes of the model body; every b value is checked < q_i. */
  push(chunk: Uint8Array): void {
    if (this.failed) throw new Error('model body: loading already failed');
    const { recordBytes, ctCount } = this.layout;
    const data = this.pending.length ? concatBytes(this.pending, chunk) : chunk;
    const whole = Math.floor(data.length / recordBytes);
    if (this.received + whole > ctCount) {
      this.failed = true;
      throw new Error(`model body: longer than ${ctCount} ciphertexts (${ctCount * recordBytes} bytes)`);
    }
    const core = this.core;
    const batch = 64;
    for (let first = 0; first < whole; first += batch) {
      const count = Math.min(batch, whole - first);
      const bytes = data.subarray(first * recordBytes, (first + count) * recordBytes);
      const st = core.fn('pmf_he_model_add')(this.live(), publicInput(core, bytes), count);
      if (st !== Status.Ok) {
        this.failed = true;
        check(st, `model body: ciphertext in ${this.received}..${this.received + count - 1}`);
      }
      this.received += count;
    }
    this.pending = data.slice(whole * recordBytes);
  }

  /** Checks the body was complete. */
  finish(): this {
    if (!this.complete || this.pending.length)
      throw new Error(`model body: incomplete (${this.received} of ${this.layout.ctCount} ciphertexts)`);
    return this;
  }

  /**
   * acc = Σ_f x_f·X^{−offset(f)}·ct[f] plus the bias row with x = 1 (docs/crypto.md#dot-product).
   * Cost: one shift-and-add of n coefficients × 2 limbs per feature.
   */
  dot(features: Features): Accumulator {
    const { rows, counts } = features;
    if (!(rows instanceof Uint32Array) || !(counts instanceof Uint32Array) || rows.length !== counts.length)
      throw new Error('features: rows and counts must be Uint32Arrays of equal length');
    const cap = 2 ** this.params.f_in - 1;
    const capped = counts.map((c) => Math.min(c, cap));
    const core = this.core;
    const acc = core.fn('pmf_he_acc_new')();
    if (acc === 0) throw new CoreError(Status.NoMemory, 'dot product');
    const handle = new Accumulator(core, acc, 'pmf_he_acc_free');
    try {
      const st = core.withBuffers([u8(rows), u8(capped)], (rp, cp) =>
        core.fn('pmf_he_dot')(this.live(), rp, cp, rows.length, cap, acc),
      );
      check(st, 'dot product');
    } catch (e) {
      handle.dispose();
      throw e;
    } finally {
      capped.fill(0);
    }
    return handle;
  }

  /**
   * The statistical distance, in units of 2^-128, that `coefficients`
   * extractions of this accumulator give the provider over a view without the
   * email's noise: flood_bound/2^(F+1) each (docs/crypto.md#noise-budget). A
   * device's sum of these stays ≤ 2^-40 (client/core/flood-ledger.ts).
   */
  floodDistance(acc: Accumulator, coefficients = 1): bigint {
    const core = this.core;
    const out = core.alloc(8);
    try {
      core.fn('pmf_he_flood_bound')(acc.live(), out);
      const [lo, hi] = new Uint32Array(core.heap.buffer, out, 2);
      const bound = (BigInt(hi) << 32n) | BigInt(lo);
      return (bound * BigInt(coefficients)) << BigInt(127 - this.params.F);
    } finally {
      core.free(out);
    }
  }

  /**
   * docs/crypto.md#extraction-pipeline for each requested coefficient: fresh public-key encryption of zero,
   * LWE extraction, blinding by Δ·r_j, flooding, switch to 2^Q, bit-packing.
   * Spam: indices [0]. Topics: the B' candidate indices.
   */
  extract(acc: Accumulator, indices: ArrayLike<number>, pk: ClientPublicKey, ksk: ClientKeySwitchKey): Extracted[] {
    const p = this.params;
    ksk.checkServes(p);
    const core = this.core;
    const size = this.layout.lweBytes;
    const out = core.alloc(size);
    const mask = core.alloc(4);
    const accPtr = acc.live();
    const pkPtr = pk.live();
    const kskPtr = ksk.live();
    try {
      return Array.from(indices, (j) => {
        if (!Number.isInteger(j) || j < 0 || j >= p.B) throw new Error(`extract: index ${j} is not in [0, ${p.B})`);
        check(core.fn('pmf_he_extract')(this.live(), accPtr, pkPtr, kskPtr, j, p.T, p.Q, p.F, out, mask), 'extract');
        const r = new DataView(core.heap.buffer).getUint32(mask, true);
        return { index: j, lwe: core.copyOut(out, size), mask: r };
      });
    } finally {
      core.wipeAndFree(mask, 4);
      core.free(out);
    }
  }

  /**
   * docs/crypto.md#packed-extraction: coefficients 0..count−1 (count ≤ B) in one
   * ciphertext, each blinded by its own r_j (masks[j]) and flooded. It links
   * the coefficients, so only for a set the provider may know (every topic).
   */
  extractPacked(
    acc: Accumulator,
    count: number,
    pk: ClientPublicKey,
    ksk: ClientKeySwitchKey,
  ): { ciphertext: Uint8Array; masks: Uint32Array } {
    const p = this.params;
    if (!Number.isInteger(count) || count < 1 || count > p.B)
      throw new Error(`extractPacked: count ${count} is not in [1, ${p.B}]`);
    ksk.checkServes(p);
    const core = this.core;
    const size = packedBytes(p, count);
    const out = core.alloc(size);
    const masks = core.alloc(4 * count);
    try {
      check(
        core.fn('pmf_he_extract_packed')(
          this.live(),
          acc.live(),
          pk.live(),
          ksk.live(),
          count,
          p.T,
          p.Q,
          p.F,
          out,
          masks,
        ),
        'extract',
      );
      return { ciphertext: core.copyOut(out, size), masks: new Uint32Array(core.heap.buffer, masks, count).slice() };
    } finally {
      core.wipeAndFree(masks, 4 * count);
      core.free(out);
    }
  }

  /**
   * What a topic_request carries for the candidate set S' (ascending topic
   * indices) and the blinds r_j in the same order: one packed ciphertext when
   * S' is every topic, else one freshly re-randomized LWE ciphertext per
   * candidate, so that the provider cannot link them to S' (`topicCiphertexts`).
   */
  extractTopics(
    acc: Accumulator,
    set: ArrayLike<number>,
    pk: ClientPublicKey,
    ksk: ClientKeySwitchKey,
  ): { ciphertexts: Uint8Array; masks: Uint32Array } {
    if (!topicCiphertexts(this.params, set.length).packed) {
      const extracted = this.extract(acc, set, pk, ksk);
      const masks = Uint32Array.from(extracted, (e) => e.mask);
      extracted.forEach((e) => (e.mask = 0));
      return { ciphertexts: concatBytes(...extracted.map((e) => e.lwe)), masks };
    }
    if (!Array.from(set).every((j, i) => j === i))
      throw new Error('extractTopics: a full candidate set must be 0..B−1 in order');
    const { ciphertext, masks } = this.extractPacked(acc, set.length, pk, ksk);
    return { ciphertexts: ciphertext, masks };
  }

  /**
   * Test diagnostic (needs the model key): the noise of one extraction of
   * coefficient j right after blinding and flooding, before dropping q1 and the
   * key switch, given d_j. A fresh extraction each call.
   */
  floodNoise(sk: ProviderKey, acc: Accumulator, j: number, d: number, pk: ClientPublicKey): number {
    const core = this.core;
    const p = this.params;
    const out = core.alloc(8);
    try {
      check(
        core.fn('pmf_he_flood_noise')(sk.live(), this.live(), acc.live(), pk.live(), j, p.T, p.F, d >>> 0, out),
        'noise',
      );
      return new DataView(core.heap.buffer).getFloat64(out, true);
    } finally {
      core.free(out);
    }
  }

  /** Test diagnostic (needs the provider's key): noise of coefficient j of acc before docs/crypto.md#extraction-pipeline, given d_j. */
  accumulatorNoise(sk: ProviderKey, acc: Accumulator, j: number, d: number): bigint {
    const core = this.core;
    const out = core.alloc(8);
    try {
      check(core.fn('pmf_he_acc_noise')(sk.live(), this.live(), acc.live(), j, this.params.T, d >>> 0, out), 'noise');
      return new DataView(core.heap.buffer).getBigInt64(out, true);
    } finally {
      core.free(out);
    }
  }
}

const u8 = (a: Uint32Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);

/** Entry point: one instance per JS realm. */
export class He {
  constructor(readonly core: WasmCore) {}

  /** A fresh ternary secret key, serialized (1026 bytes: 'S', version 1, 2-bit codes). Store with mode 0600. */
  generateSecretKey(): Uint8Array {
    const size = this.core.fn('pmf_he_layout')(1);
    const out = this.core.alloc(size);
    try {
      this.core.fn('pmf_he_sk_generate')(out);
      return this.core.copyOut(out, size);
    } finally {
      this.core.wipeAndFree(out, size);
    }
  }

  /** Validates and loads a serialized secret key (precomputes its NTT form). */
  loadSecretKey(bytes: Uint8Array): ProviderKey {
    const core = this.core;
    const [ptr, st] = withStatus(core, (sp) =>
      core.withBuffers([bytes], (bp) => core.fn('pmf_he_sk_load')(bp, bytes.length, sp)),
    );
    check(st, 'secret key');
    return new ProviderKey(core, ptr, new SeedDeriver(bytes));
  }

  /** Validates (tag, version, T, size, every value < q_ks) and loads a key-switching key from the provider. */
  loadKeySwitchKey(bytes: Uint8Array): ClientKeySwitchKey {
    const core = this.core;
    const [ptr, st] = withStatus(core, (sp) =>
      core.withBuffers([bytes], (bp) => core.fn('pmf_he_ksk_load')(bp, bytes.length, sp)),
    );
    check(st, 'key-switching key');
    return new ClientKeySwitchKey(core, ptr, bytes[2]);
  }

  /** 32 fresh bytes: the provider's seed per model version, or the client's nonce per session. */
  randomSeed(): Uint8Array {
    return this.core.randomBytes(SEED_BYTES);
  }

  /** Validates p0 (size, every value < q_i) and recomputes p1 from the joint seed (docs/crypto.md#per-session-public-key). */
  loadPublicKey(p0: Uint8Array, providerSeed: Uint8Array, clientNonce: Uint8Array): ClientPublicKey {
    const core = this.core;
    const seed = publicKeySeed(providerSeed, clientNonce);
    const [ptr, st] = withStatus(core, (sp) =>
      core.withBuffers([p0, seed], (pp, sd) => core.fn('pmf_he_pk_load')(pp, p0.length, sd, sp)),
    );
    check(st, 'public key');
    return new ClientPublicKey(core, ptr, 'pmf_he_pk_free');
  }

  /**
   * An empty client model for these parameters; feed it with push(). cacheA
   * defaults to caching when the expanded a polynomials take at most
   * CACHE_A_DEFAULT_LIMIT bytes (spam models up to N ≈ 16M), else on demand
   * (topic models: N = 20K at B = 2048 would need 655 MB).
   */
  newClientModel(params: HeParams, opts: { cacheA?: boolean } = {}): ClientModel {
    validateParams(params);
    const cacheA = opts.cacheA ?? heLayout(params).ctCount * A_BYTES_PER_CT <= CACHE_A_DEFAULT_LIMIT;
    const core = this.core;
    const [ptr, st] = withStatus(core, (sp) => core.fn('pmf_he_model_new')(params.N + 1, params.B, cacheA ? 1 : 0, sp));
    check(st, 'client model');
    return new ClientModel(core, ptr, params, cacheA);
  }
}

/** Both ends' keys for one user in one process (benches, tests, local checks). */
export interface LocalSession {
  pk: ClientPublicKey;
  ksk: ClientKeySwitchKey;
  /** The provider's key for this user: it decrypts what the client extracts. */
  user: ProviderKey;
  dispose(): void;
}

/** What a hello gives a client (fresh nonce, p0, the user's KSK), without a network. */
export function localSession(
  he: He,
  sk: ProviderKey,
  providerSeed: Uint8Array,
  T: number,
  id: UserKeyId = { salt: he.randomSeed(), epoch: 1 },
): LocalSession {
  const nonce = he.randomSeed();
  const pk = he.loadPublicKey(sk.publicKeyFor(providerSeed, nonce), providerSeed, nonce);
  const user = sk.userKey(providerSeed, id);
  const ksk = he.loadKeySwitchKey(sk.keySwitchKey(providerSeed, user, id, T));
  return {
    pk,
    ksk,
    user,
    dispose() {
      pk.dispose();
      ksk.dispose();
      user.dispose();
    },
  };
}

let loading: Promise<He> | undefined;

export function loadHe(): Promise<He> {
  loading ??= loadCore().then((core) => new He(core));
  return loading;
}
