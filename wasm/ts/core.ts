// Loads the Emscripten module (wasm embedded, see scripts/build-wasm.mjs) and
// gives typed, bounds-checked access to its linear memory. Every other wrapper
// in wasm/ts/ builds on WasmCore; nothing else touches the raw module.
import createPmfCore from '../build/pmf_core.js';
import { ristrettoReady } from './ristretto.js';

/** ABI version this wrapper was written against (wasm/src/common/abi.cpp). */
export const ABI_VERSION = 5;

type ExportFn = (...args: number[]) => number;

/**
 * A pointer returned by wasm as an unsigned heap offset. Exports return i32,
 * so with memory past 2 GiB (the build allows 4 GB) a pointer arrives
 * negative, and typed-array views would count it from the end of memory.
 * Passing either form back into wasm is fine (same 32 bits).
 */
export const ptr = (p: number): number => p >>> 0;

interface EmscriptenModule {
  HEAPU8: Uint8Array;
  _malloc(size: number): number;
  _free(ptr: number): void;
  [name: string]: unknown;
}

export class WasmCore {
  constructor(private readonly mod: EmscriptenModule) {}

  /** Current view of linear memory; re-read after any call that may allocate. */
  get heap(): Uint8Array {
    return this.mod.HEAPU8;
  }

  /** Calls an exported C function (name without the leading underscore). */
  fn(name: string): ExportFn {
    const f = this.mod[`_${name}`];
    if (typeof f !== 'function') throw new Error(`wasm export ${name} is missing (stale build?)`);
    return f as ExportFn;
  }

  alloc(bytes: number): number {
    const p = ptr(this.mod._malloc(Math.max(1, bytes)));
    if (p === 0) throw new Error(`wasm out of memory allocating ${bytes} bytes`);
    return p;
  }

  free(p: number): void {
    this.mod._free(p);
  }

  /** Zeroes then frees: for buffers that held secrets. */
  wipeAndFree(p: number, bytes: number): void {
    this.heap.fill(0, ptr(p), ptr(p) + bytes);
    this.mod._free(p);
  }

  /** Copies data into fresh wasm memory. */
  copyIn(data: Uint8Array): number {
    const p = this.alloc(data.length);
    this.heap.set(data, p);
    return p;
  }

  /** Copies len bytes out of wasm memory. */
  copyOut(p: number, len: number): Uint8Array {
    return this.heap.slice(ptr(p), ptr(p) + len);
  }

  /**
   * Runs fn with each input copied into wasm memory, then frees them (wiping,
   * since inputs are often secret).
   */
  withBuffers<T>(inputs: Uint8Array[], fn: (...ptrs: number[]) => T): T {
    const ptrs: number[] = [];
    try {
      for (const input of inputs) ptrs.push(this.copyIn(input));
      return fn(...ptrs);
    } finally {
      ptrs.forEach((p, i) => this.wipeAndFree(p, inputs[i].length));
    }
  }

  /** Constant-time equality of two byte strings (length is public). */
  ctEqual(a: Uint8Array, b: Uint8Array): boolean {
    if (a.length !== b.length) return false;
    return this.withBuffers([a, b], (pa, pb) => this.fn('pmf_ct_memeq')(pa, pb, a.length) === 1);
  }

  /** CSPRNG bytes drawn inside the module (the platform's getRandomValues). */
  randomBytes(len: number): Uint8Array {
    const p = this.alloc(len);
    try {
      this.fn('pmf_random_bytes')(p, len);
      return this.copyOut(p, len);
    } finally {
      this.wipeAndFree(p, len);
    }
  }
}

let loading: Promise<WasmCore> | undefined;

/**
 * Instantiates the module once per JS realm (Node process, worker, page), and
 * readies libsodium's ristretto255 (wasm/ts/ristretto.ts) with it: the base
 * OTs of everything that holds a WasmCore use it synchronously.
 */
export function loadCore(): Promise<WasmCore> {
  loading ??= (async () => {
    const [mod] = (await Promise.all([createPmfCore(), ristrettoReady()])) as [EmscriptenModule, void];
    const core = new WasmCore(mod);
    const abi = core.fn('pmf_abi_version')();
    if (abi !== ABI_VERSION) {
      throw new Error(`wasm ABI ${abi} does not match wrapper ABI ${ABI_VERSION}: rebuild with npm run build:wasm`);
    }
    return core;
  })();
  return loading;
}
