// The base OTs of a session (Chou–Orlandi over ristretto255, wasm/ts/ot.ts):
// received points checked, the base-OT keys, and the provider's half, which
// the provider may hand to a native backend.
import { sha256 } from '@noble/hashes/sha2.js';
import { ProtocolError } from './ot-wire.js';
import { add, checkElement, mul, mulBase, mulReceived, reduceWide } from './ristretto.js';

/** Base OTs per session (= label length in bits). */
export const BASE_OTS = 128;
export const KEY = 32;
export const POINT = 32;
const ENC = new TextEncoder();

/** Refuses anything but the canonical encoding of a non-identity ristretto255 element. */
export function checkPoint(bytes: Uint8Array, what: string): Uint8Array {
  const c = checkElement(bytes);
  if (c === 'invalid') throw new ProtocolError(`${what}: not a valid ristretto255 point`);
  if (c === 'identity') throw new ProtocolError(`${what}: identity point`);
  return bytes;
}

/** s·P for a received P, refused as checkPoint would. */
export function mulPoint(scalar: Uint8Array, bytes: Uint8Array, what: string): Uint8Array {
  const product = mulReceived(scalar, bytes);
  if (product === 'identity') throw new ProtocolError(`${what}: identity point`);
  if (product === 'invalid') throw new ProtocolError(`${what}: not a valid ristretto255 point`);
  return product;
}

/** Base-OT key i: H(domain, i, A, B_i, shared point). */
export function baseKey(i: number, A: Uint8Array, B: Uint8Array, shared: Uint8Array): Uint8Array {
  const idx = new Uint8Array([i & 0xff, i >> 8]);
  return sha256.create().update(ENC.encode('pmf-ot-base-v1')).update(idx).update(A).update(B).update(shared).digest();
}

/**
 * The provider's half of a session's base OTs, given the client's A, the
 * choice bits s and 64 random bytes per OT: for each i, b_i = wide_i mod L,
 * B_i = b_i·G + s_i·A and k_i = H(i, A, B_i, b_i·A). Returns B_0..B_127 ‖
 * k_0..k_127. The provider hands over a native equivalent (useNativeBaseOt).
 */
export type BaseOtReceive = (A: Uint8Array, s: Uint8Array, wide: Uint8Array) => Uint8Array;

/** BaseOtReceive on this realm's ristretto255 backend. @internal (exported for the native binding's test) */
export function receiveBaseHere(A: Uint8Array, s: Uint8Array, wide: Uint8Array): Uint8Array {
  const out = new Uint8Array(BASE_OTS * (POINT + KEY));
  for (let i = 0; i < BASE_OTS; i++) {
    const b = reduceWide(wide.subarray(64 * i, 64 * (i + 1)));
    const B0 = mulBase(b);
    const B1 = add(B0, A);
    // B = s_i ? B1 : B0, selected with a mask rather than a branch.
    const mask = -((s[i >> 3] >> (i & 7)) & 1) & 0xff;
    const B = B0.map((x, k) => x ^ (mask & (x ^ B1[k])));
    const bA = mul(b, A);
    out.set(B, POINT * i);
    out.set(baseKey(i, A, B, bA), POINT * BASE_OTS + KEY * i);
    for (const secret of [b, B0, B1, B, bA]) secret.fill(0);
  }
  return out;
}

let receiveBase: BaseOtReceive = receiveBaseHere;

/** The provider's half of the base OTs on the backend useNativeBaseOt chose. */
export const receiveBaseOts: BaseOtReceive = (A, s, wide) => receiveBase(A, s, wide);

/**
 * From now on OtSender answers base OTs with `native` (the provider's
 * libsodium binding: one call instead of 640 through JavaScript), or with
 * receiveBaseHere again when given nothing.
 */
export function useNativeBaseOt(native?: BaseOtReceive): void {
  receiveBase = native ?? receiveBaseHere;
}
