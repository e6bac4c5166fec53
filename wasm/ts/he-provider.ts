// The provider's side of the lattice layer: the model key, which encrypts the
// model, answers each session with p0 and derives per-user keys and their
// key-switching keys; a user key decrypts what that user's client extracts
// (docs/crypto.md#per-user-key-switching). Bytes in, bytes out.
import { hkdf } from '@noble/hashes/hkdf.js';
import { hmac } from '@noble/hashes/hmac.js';
import { concatBytes } from '@noble/hashes/utils.js';
import { sha256 } from '@noble/hashes/sha2.js';
import type { WasmCore } from './core.js';
import { bytes32, Handle, publicInput, publicKeySeed, withStatus } from './he-handle.js';
import { HE_N, HeContext, MODEL_A_ROUNDS, topicCiphertexts, type HeParams, type ModelARounds } from './he-params.js';
import { check } from './status.js';

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
export class SeedDeriver {
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

export class ProviderKey extends Handle {
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

  /**
   * This key bound to one model's parameters, as SEAL's Decryptor and
   * Encryptor bind a key to a SEALContext: one key serves models of several
   * parameter sets, and each bound object can only use its own.
   */
  forContext(params: HeParams | HeContext): BoundProviderKey {
    return new BoundProviderKey(this, HeContext.of(params));
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
}

/** A ProviderKey bound to one HeContext (ProviderKey.forContext): its calls take no parameters. */
export class BoundProviderKey {
  private readonly out = new Uint32Array(2); // [y or phase lo, phase hi]

  constructor(
    readonly key: ProviderKey,
    readonly context: HeContext,
  ) {}

  private call(name: string, lwe: Uint8Array, ...args: number[]): void {
    const core = this.key.core;
    if (!(lwe instanceof Uint8Array)) throw new Error('LWE ciphertext: must be a Uint8Array');
    const inp = publicInput(core, lwe);
    const out = core.alloc(8);
    try {
      check(core.fn(name)(this.key.live(), inp, lwe.length, ...args, out), 'LWE ciphertext');
      this.out.set(new Uint32Array(core.heap.buffer, out, 2));
    } finally {
      core.wipeAndFree(out, 8);
    }
  }

  /** b' + <a', s> mod 2^Q of an LWE ciphertext (what decryption rounds; its noise, for tests). */
  lwePhase(lwe: Uint8Array): bigint {
    this.call('pmf_he_lwe_phase', lwe, this.context.params.Q);
    const v = (BigInt(this.out[1]) << 32n) | BigInt(this.out[0]);
    this.out.fill(0);
    return v;
  }

  /** y = d_j + r_j mod 2^T (docs/crypto.md#decryption), uniform to the provider. Cost: one length-n inner product. */
  decryptLwe(lwe: Uint8Array): number {
    const { T, Q } = this.context.params;
    this.call('pmf_he_decrypt', lwe, T, Q);
    const y = this.out[0];
    this.out.fill(0);
    return y;
  }

  /**
   * y_j = d_j + r_j mod 2^T for j < count from one packed ciphertext
   * (docs/crypto.md#packed-extraction). Cost: count length-n/2 inner products,
   * as for count LWE ciphertexts.
   */
  decryptPacked(ciphertext: Uint8Array, count: number): Uint32Array {
    const core = this.key.core;
    const p = this.context.params;
    if (!(ciphertext instanceof Uint8Array)) throw new Error('packed ciphertext: must be a Uint8Array');
    if (!Number.isInteger(count) || count < 1 || count > p.B)
      throw new Error(`packed ciphertext: count ${count} is not in [1, ${p.B}]`);
    const inp = publicInput(core, ciphertext);
    const out = core.alloc(4 * count);
    try {
      check(
        core.fn('pmf_he_decrypt_packed')(this.key.live(), inp, ciphertext.length, p.T, p.Q, count, out),
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
  decryptTopics(ciphertexts: Uint8Array, bPrime: number): Uint32Array {
    const { packed, bytes } = topicCiphertexts(this.context.params, bPrime);
    if (ciphertexts.length !== bytes)
      throw new RangeError(`topic ciphertexts: wrong length (${ciphertexts.length} bytes, expected ${bytes})`);
    if (packed) return this.decryptPacked(ciphertexts, bPrime);
    const size = this.context.layout.lweBytes;
    return Uint32Array.from({ length: bPrime }, (_, j) =>
      this.decryptLwe(ciphertexts.subarray(j * size, (j + 1) * size)),
    );
  }

  /**
   * Encrypts the model row by row, yielding one ciphertext record (32-byte
   * seed ‖ bit-packed b, context.layout.recordBytes) at a time, so a 5M-row model
   * never needs all ciphertexts in memory. `weights` is the (N+1)×B matrix in
   * row-major order, row 0 = bias, either whole or as chunks of whole rows.
   * Each record's a is expanded with aRounds (MODEL_A_ROUNDS: package format 2).
   */
  *encryptModel(
    weights: Int32Array | Iterable<Int32Array>,
    aRounds: ModelARounds = MODEL_A_ROUNDS,
  ): Generator<Uint8Array> {
    const core = this.key.core;
    const p = this.context.params;
    const { rowsPerCt, recordBytes } = this.context.layout;
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
      check(core.fn('pmf_he_encrypt_record')(this.key.live(), msg, p.T, aRounds, out), 'model encryption');
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
