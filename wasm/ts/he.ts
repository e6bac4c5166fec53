// Typed API of the lattice layer (docs/crypto.md, C++ in wasm/src/he/).
// Bytes in, bytes out: nothing here knows about transport or storage.
//
//   provider: generateSecretKey → loadSecretKey → publicKeyFor / forContext(params).encryptModel
//             → userKey(user, epoch): keySwitchKey() for the client, forContext(params).decryptLwe
//   client:   newClientModel(params).push(body chunks…).finish()
//             → dot(features) → extract(acc, indices, loadPublicKey(p0, providerSeed, clientNonce),
//                                       loadKeySwitchKey(ksk))
//
// Only the `lwe` byte strings returned by extract() may leave the client; the
// accumulator, masks and every intermediate value stay on the device.
//
// The layer's files: he-params.ts (parameters, HeContext, sizes),
// he-provider.ts (ProviderKey, BoundProviderKey), he-client.ts (ClientModel and the client's
// keys), he-handle.ts (wasm handles); this file is the factory and re-exports
// them. Test diagnostics that need the model key live in wasm/test/he/.
import { loadCore, type WasmCore } from './core.js';
import { ClientKeySwitchKey, ClientModel, ClientPublicKey } from './he-client.js';
import { publicKeySeed, withStatus } from './he-handle.js';
import {
  A_BYTES_PER_CT,
  CACHE_A_DEFAULT_LIMIT,
  HeContext,
  MODEL_A_ROUNDS,
  SEED_BYTES,
  type HeParams,
  type ModelARounds,
} from './he-params.js';
import { ProviderKey, SeedDeriver } from './he-provider.js';
import { check } from './status.js';

export * from './he-params.js';
export { publicKeySeed } from './he-handle.js';
export { BoundProviderKey, ProviderKey, type UserKeyId } from './he-provider.js';
export {
  Accumulator,
  ClientKeySwitchKey,
  ClientModel,
  ClientPublicKey,
  type Extracted,
  type Features,
} from './he-client.js';

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
   * An empty client model for these parameters; feed it with push(). It holds
   * up to aCacheBytes of expanded a polynomials (A_BYTES_PER_CT each,
   * default CACHE_A_DEFAULT_LIMIT): every one at load time when the whole
   * model fits (spam models up to N ≈ 16M), else each when a dot product first
   * touches it (topic models: N = 20K at B = 2048 would need 655 MB for all);
   * the others are expanded again at every dot product. 0: none held.
   * aRounds: the XOF of the records' a, as the package's format says
   * (default MODEL_A_ROUNDS, what encryptModel writes).
   */
  newClientModel(
    params: HeParams | HeContext,
    opts: { aCacheBytes?: number; aRounds?: ModelARounds } = {},
  ): ClientModel {
    const context = HeContext.of(params);
    const { N, B } = context.params;
    const bytes = opts.aCacheBytes ?? CACHE_A_DEFAULT_LIMIT;
    if (!(bytes >= 0)) throw new Error(`aCacheBytes: ${bytes} is not a byte count`);
    const cap = Math.min(context.layout.ctCount, Math.floor(bytes / A_BYTES_PER_CT));
    const core = this.core;
    const rounds = opts.aRounds ?? MODEL_A_ROUNDS;
    const [ptr, st] = withStatus(core, (sp) => core.fn('pmf_he_model_new')(N + 1, B, cap, rounds, sp));
    check(st, 'client model');
    return new ClientModel(core, ptr, context);
  }
}

let loading: Promise<He> | undefined;

export function loadHe(): Promise<He> {
  loading ??= loadCore().then((core) => new He(core));
  return loading;
}
