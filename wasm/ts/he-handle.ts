// What the lattice layer's TypeScript classes share: wasm handles that free
// (and for secrets wipe) their C++ object, status out-slots, the reusable
// buffer for public inputs, and p1's seed.
import { sha256 } from '@noble/hashes/sha2.js';
import type { WasmCore } from './core.js';
import { SEED_BYTES } from './he-params.js';

/** Frees wasm handles of objects the caller forgot to dispose (secrets are wiped by the C++ free). */
const finalizer = new FinalizationRegistry<() => void>((release) => release());

export abstract class Handle {
  protected ptr: number;
  private readonly token = {};
  constructor(
    readonly core: WasmCore,
    ptr: number,
    private readonly freeName: string,
  ) {
    this.ptr = ptr;
    finalizer.register(this, () => core.fn(freeName)(ptr), this.token);
  }
  /** The wasm pointer (internal to the lattice layer's classes). */
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
export function withStatus<T>(core: WasmCore, fn: (statusPtr: number) => T): [T, number] {
  const sp = core.alloc(4);
  try {
    const r = fn(sp);
    return [r, new DataView(core.heap.buffer).getInt32(sp, true)];
  } finally {
    core.free(sp);
  }
}

export function bytes32(b: Uint8Array, what: string): Uint8Array {
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

/**
 * A reusable wasm buffer for public inputs (LWE ciphertexts to decrypt, model
 * body records), instead of malloc + copy + wipe + free per call. JS is
 * single-threaded per realm, so one per module instance is enough.
 */
const scratch = new WeakMap<WasmCore, { ptr: number; size: number }>();
export function publicInput(core: WasmCore, data: Uint8Array): number {
  let s = scratch.get(core);
  if (!s || s.size < data.length) {
    if (s) core.free(s.ptr);
    s = { ptr: core.alloc(data.length + 4), size: data.length + 4 };
    scratch.set(core, s);
  }
  core.heap.set(data, s.ptr);
  return s.ptr;
}

export const u8 = (a: Uint32Array): Uint8Array => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
