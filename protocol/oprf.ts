// RFC 9497 OPRF, base mode (0x00), ciphersuite ristretto255-SHA512, for the
// private blocklist (docs/blocklist.md). The group arithmetic is libsodium's
// WebAssembly build (wasm/ts/ristretto.ts): constant-time and about 10x
// faster than pure-JS @noble/curves, whose ristretto255_oprf is the reference
// the tests check this against (same bytes for the same inputs) besides the
// RFC's test vectors.
//
// HashToGroup is hash_to_ristretto255 of RFC 9380: expand_message_xmd(SHA-512,
// "HashToGroup-" ‖ contextString, 64 bytes), then the RFC 9496 one-way map.
// Await oprfReady() once before the first call (libsodium loads
// asynchronously); a call before that throws.
//
// The client of the blocklist blinds additively (`additive`, below): the
// provider's BlindEvaluate and the output are RFC 9497's, but the client's two
// scalar multiplications per item no longer depend on the item, so they are
// done ahead of the email (docs/blocklist.md#additive-blinding). `oprf.blind`
// and `oprf.finalize` are the RFC's multiplicative client, kept as the
// reference the RFC vectors and noble check.
//
// Where the time goes (docs/blocklist.md#performance): SHA-512 is libsodium's
// and a received element is decoded once (by the multiplication or the
// subtraction, whose failure is then classified).
import {
  add,
  checkElement,
  fromUniform,
  invertScalar,
  isIdentity,
  mul,
  mulBase,
  mulReceived,
  randomScalar,
  reduceWide,
  ristrettoReady,
  scalarCheck,
  sha512,
  sub,
} from '../wasm/ts/ristretto.js';
import { concatBytes } from '@noble/hashes/utils.js';

const ascii = (s: string): Uint8Array => new TextEncoder().encode(s);

/** contextString = "OPRFV1-" ‖ I2OSP(mode = 0x00, 1) ‖ "-" ‖ "ristretto255-SHA512" (RFC 9497 §3.1). */
const CONTEXT = concatBytes(ascii('OPRFV1-'), Uint8Array.of(0x00), ascii('-ristretto255-SHA512'));
const HASH_TO_GROUP_DST = concatBytes(ascii('HashToGroup-'), CONTEXT);
const DERIVE_KEY_PAIR_DST = concatBytes(ascii('DeriveKeyPair'), CONTEXT);
const FINALIZE = ascii('Finalize');

/** Initializes libsodium; await once before using the OPRF (later calls return the same promise). */
export const oprfReady = ristrettoReady;

export interface OprfKeys {
  secretKey: Uint8Array;
  publicKey: Uint8Array;
}

/** I2OSP(len(x), 2) ‖ x; inputs are at most 65535 bytes (RFC 9497 §3.3). */
function lengthPrefixed(x: Uint8Array, what: string): Uint8Array {
  if (!(x instanceof Uint8Array) || x.length > 0xffff) throw new Error(`OPRF ${what} must be at most 65535 bytes`);
  return concatBytes(Uint8Array.of(x.length >> 8, x.length & 0xff), x);
}

/**
 * expand_message_xmd (RFC 9380 §5.3.1) with SHA-512 for 64 output bytes: one
 * block, so b_1 = H(b_0 ‖ 0x01 ‖ DST') with b_0 = H(Z_pad ‖ msg ‖ I2OSP(64, 2) ‖ 0x00 ‖ DST').
 * DSTs here are short (< 256 bytes).
 */
function expandXmd64(msg: Uint8Array, dst: Uint8Array): Uint8Array {
  const dstPrime = concatBytes(dst, Uint8Array.of(dst.length));
  const b0 = sha512(concatBytes(new Uint8Array(128), msg, Uint8Array.of(0, 64, 0), dstPrime));
  return sha512(concatBytes(b0, Uint8Array.of(1), dstPrime));
}

function hashToGroup(input: Uint8Array): Uint8Array {
  const wide = expandXmd64(input, HASH_TO_GROUP_DST);
  const p = fromUniform(wide);
  if (isIdentity(p)) throw new Error('OPRF input maps to the identity');
  return p;
}

function usableScalar(s: Uint8Array, what: string): Uint8Array {
  const c = scalarCheck(s);
  if (c === 'noncanonical') throw new Error(`OPRF ${what} is not a canonical 32-byte scalar`);
  if (c === 'zero') throw new Error(`OPRF ${what} is zero`);
  return s;
}

/** A received element was refused; `index` is its position in a batch. */
export class OprfElementError extends Error {
  constructor(
    message: string,
    readonly index = 0,
  ) {
    super(message);
  }
}

/** scalar·element for a received element; a refused one throws an OprfElementError saying why. */
function mulElement(scalar: Uint8Array, bytes: Uint8Array, what: string, index = 0): Uint8Array {
  const product = mulReceived(scalar, bytes);
  if (product === 'identity') throw new OprfElementError(`OPRF ${what} point at infinity`, index);
  if (product === 'invalid') throw new OprfElementError(`OPRF ${what}: invalid ristretto255 encoding`, index);
  return product;
}

/** key·X_i for consecutive 32-byte elements X_i, throwing on any refused one (the provider's binding). */
export type EvaluateAll = (secretKey: Uint8Array, blinded: Uint8Array) => Uint8Array;

let nativeEvaluateAll: EvaluateAll | undefined;

/** From now on blindEvaluateAll runs on `native` (the provider's binding), or on this realm's backend again when given nothing. */
export function useNativeEvaluateAll(native?: EvaluateAll): void {
  nativeEvaluateAll = native;
}

/** Hash(I2OSP(len(input), 2) ‖ input ‖ I2OSP(len(unblinded), 2) ‖ unblinded ‖ "Finalize"). */
const finalHash = (input: Uint8Array, unblinded: Uint8Array): Uint8Array =>
  sha512(concatBytes(lengthPrefixed(input, 'input'), lengthPrefixed(unblinded, 'element'), FINALIZE));

/** blinded = blind·H(input), with the blind given (the RFC test vectors fix it). @internal */
export function blindWith(input: Uint8Array, blind: Uint8Array): Uint8Array {
  lengthPrefixed(input, 'input');
  return mul(usableScalar(blind, 'blind'), hashToGroup(input));
}

/** The provider's side and the client's side of RFC 9497 base mode, the same calls as noble's ristretto255_oprf.oprf. */
export const oprf = Object.freeze({
  /** (Provider) a random key pair. */
  generateKeyPair(): OprfKeys {
    const secretKey = randomScalar();
    return { secretKey, publicKey: mulBase(secretKey) };
  },

  /** (Provider) DeriveKeyPair of RFC 9497 §3.2.1 from a 32-byte seed and public info. */
  deriveKeyPair(seed: Uint8Array, info: Uint8Array): OprfKeys {
    if (!(seed instanceof Uint8Array) || seed.length !== 32) throw new Error('OPRF seed must be 32 bytes');
    const msg = concatBytes(seed, lengthPrefixed(info, 'key info'), Uint8Array.of(0));
    for (let counter = 0; counter <= 255; counter++) {
      msg[msg.length - 1] = counter;
      const secretKey = reduceWide(expandXmd64(msg, DERIVE_KEY_PAIR_DST));
      if (scalarCheck(secretKey) === 'ok') return { secretKey, publicKey: mulBase(secretKey) };
    }
    throw new Error('OPRF DeriveKeyPair failed');
  },

  /** (Client) a fresh random blind and blinded = blind·H(input); keep blind secret. */
  blind(input: Uint8Array): { blind: Uint8Array; blinded: Uint8Array } {
    const blind = randomScalar();
    return { blind, blinded: blindWith(input, blind) };
  },

  /** (Provider) evaluated = key·blinded; refuses non-canonical encodings and the identity. */
  blindEvaluate(secretKey: Uint8Array, blinded: Uint8Array): Uint8Array {
    return mulElement(usableScalar(secretKey, 'key'), blinded, 'blinded');
  },

  /**
   * (Provider) blindEvaluate for consecutive 32-byte elements, the key checked
   * once; natively in one call when the provider hands one over
   * (useNativeEvaluateAll). Refusals name the element either way.
   */
  blindEvaluateAll(secretKey: Uint8Array, blinded: Uint8Array): Uint8Array {
    usableScalar(secretKey, 'key');
    if (nativeEvaluateAll && blinded.length > 0 && blinded.length % 32 === 0) {
      try {
        return nativeEvaluateAll(secretKey, blinded);
      } catch {
        // A refused element: the loop below finds which, and says so.
      }
    }
    const out = new Uint8Array(blinded.length);
    for (let i = 0; i * 32 < blinded.length; i++) {
      out.set(mulElement(secretKey, blinded.subarray(32 * i, 32 * i + 32), 'blinded', i), 32 * i);
    }
    return out;
  },

  /** (Client) the 64-byte output: Hash(input, blind⁻¹·evaluated, "Finalize"). */
  finalize(input: Uint8Array, blind: Uint8Array, evaluated: Uint8Array): Uint8Array {
    lengthPrefixed(input, 'input');
    const inverse = invertScalar(usableScalar(blind, 'blind'));
    try {
      return finalHash(input, mulElement(inverse, evaluated, 'evaluated'));
    } finally {
      inverse.fill(0);
    }
  },
});

/** A blind r with r·G and r·K for one list key K = k·G (see `additive`). */
export interface BlindingPair {
  blind: Uint8Array;
  /** r·G, added to H(x) to blind it. */
  toAdd: Uint8Array;
  /** r·K, subtracted from the provider's answer to unblind it. */
  toRemove: Uint8Array;
}

/**
 * The client's side with additive blinding: blinded = H(x) + r·G, and
 * evaluated − r·K = k·H(x) when the provider answers k·blinded with the key
 * of the public key K. The output is RFC 9497's (Finalize of k·H(x)). The
 * two multiplications are made before the item is known (`pair`), so a
 * message's lookup costs only hashing and two additions per item. A pair
 * must blind one item only: two items blinded with one pair would show the
 * provider H(x) − H(x'). docs/blocklist.md#additive-blinding gives the
 * security argument.
 */
export const additive = Object.freeze({
  /** Whether `publicKey` can blind: a canonical encoding of a group element other than the identity. */
  checkPublicKey(publicKey: Uint8Array): void {
    if (checkElement(publicKey) !== 'ok') throw new Error('OPRF public key is not a valid ristretto255 element');
  },

  /** A pair for `publicKey` (checked with checkPublicKey) from a fresh blind, or from a kept one. */
  pair(publicKey: Uint8Array, blind: Uint8Array = randomScalar()): BlindingPair {
    usableScalar(blind, 'blind');
    return { blind, toAdd: mulBase(blind), toRemove: mul(blind, publicKey) };
  },

  /** blinded = H(input) + r·G. */
  blind(input: Uint8Array, pair: BlindingPair): Uint8Array {
    lengthPrefixed(input, 'input');
    const blinded = add(hashToGroup(input), pair.toAdd);
    if (isIdentity(blinded)) throw new Error('OPRF blinded element is the identity'); // H(x) = −r·G: never, in practice
    return blinded;
  },

  /** The 64-byte output: Hash(input, evaluated − r·K, "Finalize"); a refused element throws an OprfElementError. */
  finalize(input: Uint8Array, pair: BlindingPair, evaluated: Uint8Array, index = 0): Uint8Array {
    lengthPrefixed(input, 'input');
    if (isIdentity(evaluated)) throw new OprfElementError('OPRF evaluated point at infinity', index);
    let unblinded: Uint8Array;
    try {
      unblinded = sub(evaluated, pair.toRemove);
    } catch {
      throw new OprfElementError('OPRF evaluated: invalid ristretto255 encoding', index);
    }
    return finalHash(input, unblinded);
  },
});

/** RFC 9497 Evaluate: the output for input under secretKey without the protocol (the provider building its list). */
export function evaluate(secretKey: Uint8Array, input: Uint8Array): Uint8Array {
  lengthPrefixed(input, 'input');
  return finalHash(input, mul(usableScalar(secretKey, 'key'), hashToGroup(input)));
}
