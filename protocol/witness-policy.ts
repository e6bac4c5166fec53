// A client's witness policy: the witnesses it trusts (C2SP cosignature vkeys)
// and how many of them must have cosigned a package log checkpoint before it
// believes that checkpoint is the one everybody sees. The default ships here
// (DEFAULT_WITNESS_POLICY); users change it in the extension's options or with
// the CLI's --witness-policy. A quorum of 0 turns the check off: the client
// then only checks that the log it sees never forks from what it saw before.
import {
  describeKey,
  parseVerifierKey,
  SIG_COSIGNATURE_V1,
  verifyCosignature,
  type SignedNote,
  type VerifierKey,
} from './signed-note.js';

export interface WitnessPolicy {
  /** Valid cosignatures needed, 0..witnesses.length. */
  quorum: number;
  /** Cosignature vkeys (name+keyid+base64(0x04 ‖ Ed25519 key)). */
  witnesses: string[];
}

/** A witness's cosignature found valid on a checkpoint. */
export interface Cosigner {
  name: string;
  /** When the witness cosigned (Unix seconds, the witness's clock). */
  time: number;
}

export const MAX_WITNESSES = 64;

/** Checks a policy as given by a user or a file; throws saying what is wrong. */
export function parseWitnessPolicy(x: unknown): WitnessPolicy {
  const bad = (why: string): never => {
    throw new Error(`witness policy: ${why}`);
  };
  if (typeof x !== 'object' || x === null) return bad('is not an object');
  const p = x as Record<string, unknown>;
  if (!Array.isArray(p.witnesses) || p.witnesses.length > MAX_WITNESSES)
    return bad(`witnesses must be a list of at most ${MAX_WITNESSES} witness keys`);
  const keys = p.witnesses.map((w): VerifierKey => {
    if (typeof w !== 'string') return bad('each witness must be a key (NAME+KEYID+BASE64)');
    const k = parseVerifierKey(w);
    if (k.type !== SIG_COSIGNATURE_V1) bad(`${describeKey(k)} is not a witness cosignature key (type 4)`);
    return k;
  });
  if (new Set(keys.map((k) => k.name)).size !== keys.length) bad('a witness is listed twice');
  if (new Set(keys.map((k) => String(k.publicKey))).size !== keys.length) bad('two witnesses share a key');
  if (typeof p.quorum !== 'number' || !Number.isInteger(p.quorum) || p.quorum < 0 || p.quorum > keys.length)
    bad(`quorum must be a whole number from 0 to the ${keys.length} witnesses listed`);
  return { quorum: p.quorum as number, witnesses: (p.witnesses as string[]).map((w) => w.trim()) };
}

/** Set only by a release build (webpack's DefinePlugin) to the policy file given to `npm run release`. */
declare const PMF_RELEASE_WITNESS_POLICY: unknown;

/**
 * What a client starts with. No public witness network cosigns these logs yet
 * (docs/security.md#the-package-log-and-its-witnesses), so outside a release
 * this names none and the check is off until the user names witnesses. A
 * store release names its witnesses: `npm run release -- --witness-policy
 * FILE` builds that file's policy in here, and refuses an empty one
 * (scripts/release/README.md).
 */
export const DEFAULT_WITNESS_POLICY: WitnessPolicy = parseWitnessPolicy(
  typeof PMF_RELEASE_WITNESS_POLICY === 'undefined' ? { quorum: 0, witnesses: [] } : PMF_RELEASE_WITNESS_POLICY,
);

/** The policy's witnesses with a valid cosignature on this note (a checkpoint), in policy order. */
export function cosigners(note: SignedNote, policy: WitnessPolicy): Cosigner[] {
  return policy.witnesses.flatMap((w) => {
    const k = parseVerifierKey(w);
    const time = verifyCosignature(note, k);
    return time === undefined ? [] : [{ name: k.name, time }];
  });
}
