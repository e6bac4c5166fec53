// The provider's ristretto255 (base OTs of new sessions, the blocklist OPRF)
// on the system's native libsodium, about 3x less CPU than the WebAssembly
// build the clients use, and the base-OT loop of a new session and the
// blocklist OPRF over a request's elements each in one native call:
// provider-server/native/, built by
// `node scripts/build-native.mjs` (setup runs it). Each thread that computes
// awaits providerSodiumReady() once; without the binding the provider still
// works, on WebAssembly, and says so at start.
import { createRequire } from 'node:module';
import { useNativeEvaluateAll, type EvaluateAll } from '../../protocol/oprf.js';
import { useNativeBaseOt, type BaseOtReceive } from '../../wasm/ts/ot.js';
import { ristrettoReady, useNativeSodium, type SodiumRistretto } from '../../wasm/ts/ristretto.js';

/** What the binding exports: libsodium's functions under the wrappers' names, the base-OT loop and the OPRF's. */
type Binding = SodiumRistretto & { pmf_ot_base_receive: BaseOtReceive; pmf_oprf_evaluate_all: EvaluateAll };

/** Where the build puts the binding, relative to this file (the same in src/ and in the compiled dist/server). */
const BINDING = '../native/build/pmf_sodium.node';

let binding: Binding | undefined;
/** Why the binding did not load, once tried: "not built", or the loader's error (a missing libsodium, say). */
let problem: string | undefined;

/** The native binding, or undefined when it is not built or does not load (nativeSodiumMissing says why). */
export function nativeSodium(): Binding | undefined {
  if (binding === undefined && problem === undefined) {
    try {
      binding = createRequire(import.meta.url)(BINDING) as Binding;
    } catch (e) {
      problem = loadProblem(e);
    }
  }
  return binding;
}

/** Why require() refused the binding, in one line. @internal */
export function loadProblem(e: unknown): string {
  const err = e as NodeJS.ErrnoException;
  if (err.code === 'MODULE_NOT_FOUND') return 'not built (node scripts/build-native.mjs)';
  return `built but does not load: ${String(err.message).split('\n')[0]}`;
}

/**
 * Switches this thread's ristretto255, base-OT loop and OPRF evaluation to the binding, when it
 * loads (on: true), or back to the WebAssembly build and the TypeScript loop
 * the clients run (on: false). Returns whether the binding is used.
 */
export function useProviderNative(on: boolean): boolean {
  const native = on ? nativeSodium() : undefined;
  useNativeSodium(native);
  useNativeBaseOt(native?.pmf_ot_base_receive);
  useNativeEvaluateAll(native?.pmf_oprf_evaluate_all);
  return native !== undefined;
}

/** Readies this thread's ristretto255, on native libsodium when the binding loads; resolves to whether it does. */
export async function providerSodiumReady(): Promise<boolean> {
  await ristrettoReady();
  return useProviderNative(true);
}

/** What the server logs at start when it runs without the binding. */
export const nativeSodiumMissing = (): string =>
  `native libsodium binding ${problem ?? 'not loaded'}: ristretto255 runs on WebAssembly, about 3x more CPU per new session and per blocklist item`;
