// ristretto255 (RFC 9496) group arithmetic for the base OTs (wasm/ts/ot.ts)
// and the blocklist OPRF (protocol/oprf.ts), on libsodium's WebAssembly build
// (libsodium-wrappers-sumo): its scalar multiplication is constant-time and
// 4-15x faster than pure-JS @noble/curves, which stays the reference in tests.
// Elements and scalars are 32-byte strings (scalars little-endian, reduced
// mod the group order L), encodings identical to noble's and the RFC's.
//
// libsodium initializes asynchronously: await ristrettoReady() once per JS
// realm before the first call (loadCore() does it for everything that holds
// a WasmCore); a call before that throws. A Node process may hand over a
// native libsodium with the same functions (useNativeSodium): the provider
// does, for its per-session and per-item work (provider-server/native/).
import sodium from './sodium.cjs';

export const ELEMENT_BYTES = 32;
export const SCALAR_BYTES = 32;

/** The libsodium functions used here: libsodium-wrappers' names, arguments, results and errors. */
export type SodiumRistretto = Pick<
  typeof sodium,
  | 'crypto_scalarmult_ristretto255'
  | 'crypto_scalarmult_ristretto255_base'
  | 'crypto_core_ristretto255_is_valid_point'
  | 'crypto_core_ristretto255_add'
  | 'crypto_core_ristretto255_sub'
  | 'crypto_core_ristretto255_from_hash'
  | 'crypto_core_ristretto255_scalar_reduce'
  | 'crypto_core_ristretto255_scalar_invert'
  | 'crypto_hash_sha512'
>;

let backend: SodiumRistretto | undefined;
let wasmReady = false;
let loading: Promise<void> | undefined;

/** Initializes libsodium once per JS realm (Node process, worker, page). */
export function ristrettoReady(): Promise<void> {
  loading ??= sodium.ready.then(() => {
    wasmReady = true;
    backend ??= sodium;
  });
  return loading;
}

/**
 * From now on this realm computes with `native` (same results, faster), or
 * with the WebAssembly build again when given nothing (after ristrettoReady()).
 */
export function useNativeSodium(native?: SodiumRistretto): void {
  backend = native ?? (wasmReady ? sodium : undefined);
}

function lib(): SodiumRistretto {
  if (!backend) throw new Error('ristretto255 used before ristrettoReady() resolved (libsodium is not initialized)');
  return backend;
}

/** Whether every byte is zero, without branching on the bytes (the identity encodes as 32 zero bytes). */
function allZero(b: Uint8Array): boolean {
  let acc = 0;
  for (let i = 0; i < b.length; i++) acc |= b[i];
  return acc === 0;
}

/** Whether an encoding is the identity's (32 zero bytes). */
export const isIdentity = (bytes: Uint8Array): boolean => bytes.length === ELEMENT_BYTES && allZero(bytes);

/**
 * What a received element is: `ok`, `invalid` (wrong length, not a canonical
 * RFC 9496 encoding, or not a point) or `identity`. libsodium's validity
 * check accepts the identity (all zeros), so that is tested separately.
 */
export function checkElement(bytes: Uint8Array): 'ok' | 'invalid' | 'identity' {
  if (bytes.length !== ELEMENT_BYTES || !lib().crypto_core_ristretto255_is_valid_point(bytes)) return 'invalid';
  return allZero(bytes) ? 'identity' : 'ok';
}

/**
 * s·P for a checked, non-identity element P and a reduced, non-zero scalar s
 * (libsodium ignores the scalar's top bit, so an unreduced one would be
 * silently wrong: reduce or check with scalarCheck first). Throws if the
 * product is the identity, which cannot happen for such inputs.
 */
export function mul(scalar: Uint8Array, element: Uint8Array): Uint8Array {
  try {
    return lib().crypto_scalarmult_ristretto255(scalar, element);
  } catch (e) {
    if (!backend) throw e;
    throw new Error('ristretto255: the product is the identity or the element is invalid');
  }
}

/**
 * s·P for a received encoding P: the multiplication decodes P once (and
 * refuses a non-canonical or off-curve encoding); only when it fails is P
 * checked again, to say why. With a valid non-zero scalar the product of a
 * valid non-identity element is never the identity (prime order).
 */
export function mulReceived(scalar: Uint8Array, bytes: Uint8Array): Uint8Array | 'invalid' | 'identity' {
  try {
    if (bytes.length === ELEMENT_BYTES) return mul(scalar, bytes);
  } catch {
    // classified below
  }
  return checkElement(bytes) === 'identity' ? 'identity' : 'invalid';
}

/** s·G for a reduced, non-zero scalar s. */
export function mulBase(scalar: Uint8Array): Uint8Array {
  try {
    return lib().crypto_scalarmult_ristretto255_base(scalar);
  } catch (e) {
    if (!backend) throw e;
    throw new Error('ristretto255: the scalar is zero');
  }
}

/** P + Q (the identity comes out as 32 zero bytes). */
export function add(p: Uint8Array, q: Uint8Array): Uint8Array {
  return lib().crypto_core_ristretto255_add(p, q);
}

/** P − Q (the identity comes out as 32 zero bytes). */
export function sub(p: Uint8Array, q: Uint8Array): Uint8Array {
  return lib().crypto_core_ristretto255_sub(p, q);
}

/** The one-way map of RFC 9496 §4.3.4 from 64 uniform bytes (hash_to_ristretto255 after expand_message). */
export function fromUniform(bytes64: Uint8Array): Uint8Array {
  return lib().crypto_core_ristretto255_from_hash(bytes64);
}

/** A 64-byte little-endian integer reduced mod L. */
export function reduceWide(bytes64: Uint8Array): Uint8Array {
  return lib().crypto_core_ristretto255_scalar_reduce(bytes64);
}

/**
 * A uniform non-zero scalar: 64 bytes from crypto.getRandomValues reduced mod
 * L (bias below 2^-250). One getRandomValues call, where libsodium's own
 * generator calls back into JS for every 4 bytes.
 */
export function randomScalar(): Uint8Array {
  const wide = new Uint8Array(64);
  for (;;) {
    globalThis.crypto.getRandomValues(wide);
    const s = reduceWide(wide);
    if (!allZero(s)) {
      wide.fill(0);
      return s;
    }
  }
}

/** s⁻¹ mod L for a non-zero reduced scalar. */
export function invertScalar(s: Uint8Array): Uint8Array {
  return lib().crypto_core_ristretto255_scalar_invert(s);
}

/** SHA-512 (libsodium's; about twice as fast as @noble/hashes on short inputs). */
export function sha512(data: Uint8Array): Uint8Array {
  return lib().crypto_hash_sha512(data);
}

/**
 * Whether a 32-byte scalar is usable: `ok`, `noncanonical` (wrong length or
 * not below L) or `zero`. The comparison does not branch on the bytes.
 */
export function scalarCheck(s: Uint8Array): 'ok' | 'noncanonical' | 'zero' {
  if (s.length !== SCALAR_BYTES) return 'noncanonical';
  const wide = new Uint8Array(64);
  wide.set(s);
  const r = reduceWide(wide);
  let diff = 0;
  for (let i = 0; i < SCALAR_BYTES; i++) diff |= r[i] ^ s[i];
  const zero = allZero(s);
  wide.fill(0);
  r.fill(0);
  if (diff !== 0) return 'noncanonical';
  return zero ? 'zero' : 'ok';
}
