// The provider's ristretto255 (base OTs of new sessions, the blocklist OPRF)
// on the system's native libsodium, about 3x less CPU than the WebAssembly
// build the clients use: provider-server/native/, built by
// `node scripts/build-native.mjs` (setup runs it). Each thread that computes
// awaits providerSodiumReady() once; without the binding the provider still
// works, on WebAssembly, and says so at start.
import { createRequire } from 'node:module';
import { ristrettoReady, useNativeSodium, type SodiumRistretto } from '../../wasm/ts/ristretto.js';

/** Where the build puts the binding, relative to this file (the same in src/ and in the compiled dist/server). */
const BINDING = '../native/build/pmf_sodium.node';

let binding: SodiumRistretto | null | undefined;

/** The native binding, or undefined when it is not built. */
export function nativeSodium(): SodiumRistretto | undefined {
  if (binding === undefined) {
    try {
      binding = createRequire(import.meta.url)(BINDING) as SodiumRistretto;
    } catch {
      binding = null;
    }
  }
  return binding ?? undefined;
}

/** Readies this thread's ristretto255, on native libsodium when the binding is built; resolves to whether it is. */
export async function providerSodiumReady(): Promise<boolean> {
  await ristrettoReady();
  const native = nativeSodium();
  if (native) useNativeSodium(native);
  return native !== undefined;
}

export const NATIVE_MISSING =
  'native libsodium binding not built (node scripts/build-native.mjs): ristretto255 runs on WebAssembly, about 3x more CPU per new session and per blocklist item';
