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
import { expand_message_xmd } from '@noble/curves/abstract/hash-to-curve.js';
import { sha512 } from '@noble/hashes/sha2.js';
import {
  checkElement,
  fromUniform,
  invertScalar,
  mul,
  mulBase,
  randomScalar,
  reduceWide,
  ristrettoReady,
  scalarCheck,
} from '../wasm/ts/ristretto.js';

const ascii = (s: string): Uint8Array => new TextEncoder().encode(s);

function concat(...parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

/** contextString = "OPRFV1-" ‖ I2OSP(mode = 0x00, 1) ‖ "-" ‖ "ristretto255-SHA512" (RFC 9497 §3.1). */
const CONTEXT = concat(ascii('OPRFV1-'), Uint8Array.of(0x00), ascii('-ristretto255-SHA512'));
const HASH_TO_GROUP_DST = concat(ascii('HashToGroup-'), CONTEXT);
const DERIVE_KEY_PAIR_DST = concat(ascii('DeriveKeyPair'), CONTEXT);
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
  return concat(Uint8Array.of(x.length >> 8, x.length & 0xff), x);
}

function hashToGroup(input: Uint8Array): Uint8Array {
  const wide = expand_message_xmd(input, HASH_TO_GROUP_DST, 64, sha512);
  const p = fromUniform(wide);
  if (checkElement(p) !== 'ok') throw new Error('OPRF input maps to the identity');
  return p;
}

function usableScalar(s: Uint8Array, what: string): Uint8Array {
  const c = scalarCheck(s);
  if (c === 'noncanonical') throw new Error(`OPRF ${what} is not a canonical 32-byte scalar`);
  if (c === 'zero') throw new Error(`OPRF ${what} is zero`);
  return s;
}

function wireElement(bytes: Uint8Array, what: string): Uint8Array {
  const c = checkElement(bytes);
  if (c === 'invalid') throw new Error(`OPRF ${what}: invalid ristretto255 encoding`);
  if (c === 'identity') throw new Error(`OPRF ${what} point at infinity`);
  return bytes;
}

/** Hash(I2OSP(len(input), 2) ‖ input ‖ I2OSP(len(unblinded), 2) ‖ unblinded ‖ "Finalize"). */
const finalHash = (input: Uint8Array, unblinded: Uint8Array): Uint8Array =>
  sha512(concat(lengthPrefixed(input, 'input'), lengthPrefixed(unblinded, 'element'), FINALIZE));

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
    const msg = concat(seed, lengthPrefixed(info, 'key info'), Uint8Array.of(0));
    for (let counter = 0; counter <= 255; counter++) {
      msg[msg.length - 1] = counter;
      const secretKey = reduceWide(expand_message_xmd(msg, DERIVE_KEY_PAIR_DST, 64, sha512));
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
    return mul(usableScalar(secretKey, 'key'), wireElement(blinded, 'blinded'));
  },

  /** (Client) the 64-byte output: Hash(input, blind⁻¹·evaluated, "Finalize"). */
  finalize(input: Uint8Array, blind: Uint8Array, evaluated: Uint8Array): Uint8Array {
    lengthPrefixed(input, 'input');
    const e = wireElement(evaluated, 'evaluated');
    const inverse = invertScalar(usableScalar(blind, 'blind'));
    try {
      return finalHash(input, mul(inverse, e));
    } finally {
      inverse.fill(0);
    }
  },
});

/** RFC 9497 Evaluate: the output for input under secretKey without the protocol (the provider building its list). */
export function evaluate(secretKey: Uint8Array, input: Uint8Array): Uint8Array {
  lengthPrefixed(input, 'input');
  return finalHash(input, mul(usableScalar(secretKey, 'key'), hashToGroup(input)));
}
