// The package transparency log, shared by provider-server (appends, signs,
// gets witnesses' cosignatures) and client (verifies). docs/threat-model.md#malicious-provider:
// a provider that encrypts one user's model with large noise can leak that
// user's features past the flooding, so every client must use the same
// package per model version, and the package hash the provider announces in a
// session needs an anchor outside the session and outside the provider.
//
// The log is an RFC 6962 Merkle tree (merkle.ts) over entries
// (modelId, version, packageSha256, createdAt). Its heads are C2SP checkpoints
// (checkpoint.ts) signed by the provider's log key and cosigned by independent
// witnesses (signed-note.ts); a client accepts a package only with an
// inclusion proof under a checkpoint its witness policy accepts
// (witness-policy.ts), and a new head only with a consistency proof from the
// head it saw before. A witness cosigns a head only if it extends the heads it
// cosigned before, so a provider cannot show one client a log of its own
// without the witnesses that client trusts going along.
//
// Leaf data (length-prefixed, so no two entries encode alike):
//   u16 len ‖ modelId ‖ u32 version ‖ packageSha256 (32 bytes) ‖ u16 len ‖ createdAt
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';
import { HASH_BYTES, hashLeaf, MAX_PROOF_HASHES } from './merkle.js';
import { fromBase64, MAX_NOTE_BYTES } from './signed-note.js';

export const LOG_FORMAT = 'pmf-package-log/2';
/** Well-known URLs on the provider's HTTP origin. */
export const LOG_PATH = '/.well-known/pmf-package-log.json';
export const LOG_PROOF_PATH = '/.well-known/pmf-package-log/proof';
export const LOG_CHECKPOINT_PATH = '/.well-known/pmf-package-log/checkpoint';
export const LOG_KEY_PATH = '/.well-known/pmf-package-log-key.json';

export interface LogEntry {
  modelId: string;
  version: number;
  /** Hex SHA-256 of the whole package file (its ETag). */
  packageSha256: string;
  /** ISO time the version was built. */
  createdAt: string;
}

/** What GET LOG_PATH returns: every entry, for auditors and `client log`. */
export interface PackageLogDocument {
  format: typeof LOG_FORMAT;
  /** The log's verifier key (vkey). Informational: clients verify with the key they pinned or recorded. */
  logKey: string;
  /** The latest checkpoint as a signed note: the log's signature and the witnesses' cosignatures. */
  checkpoint: string;
  entries: LogEntry[];
}

/**
 * What GET LOG_PROOF_PATH?old=M&model=ID&version=V returns: the latest
 * checkpoint with the proofs a client needs against it, in one answer so they
 * are about the same tree.
 */
export interface ProofBundle {
  format: typeof LOG_FORMAT;
  logKey: string;
  checkpoint: string;
  /** Present when 0 < old < the checkpoint's size: from the tree of `old` leaves. */
  consistency?: { from: number; proof: string[] };
  /** Present when the log lists (model, version): its entry, leaf index and audit path. */
  inclusion?: { index: number; entry: LogEntry; proof: string[] };
}

/** What GET LOG_KEY_PATH returns. */
export interface PackageLogKey {
  format: typeof LOG_FORMAT;
  logKey: string;
}

const HEX32 = /^[0-9a-f]{64}$/;
const ID = /^[A-Za-z0-9._-]{1,64}$/;
const MAX_CREATED_AT = 64;
/** Far above any provider's model and list versions; bounds what a client parses. */
export const MAX_LOG_ENTRIES = 100_000;

/** The low `bytes` bytes of an unsigned big-endian integer (callers validate the range). */
function uint(value: number, bytes: 2 | 4): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, value);
  return out.subarray(4 - bytes);
}

export function encodeEntry(e: LogEntry): Uint8Array {
  const id = utf8ToBytes(e.modelId);
  const at = utf8ToBytes(e.createdAt);
  return concatBytes(uint(id.length, 2), id, uint(e.version, 4), hexToBytes(e.packageSha256), uint(at.length, 2), at);
}

export const entryLeafHash = (e: LogEntry): Uint8Array => hashLeaf(encodeEntry(e));

/**
 * A short string two devices or two people can read to each other: the size
 * and the first 128 bits of the root. 128 rather than 64 bits because the
 * provider builds both logs of a fork and could grind a 64-bit collision
 * (2^32 work) by varying createdAt.
 */
export function logFingerprint(size: number, root: Uint8Array | string): string {
  return `${size}:${(typeof root === 'string' ? root : bytesToHex(root)).slice(0, 32)}`;
}

/** Checks one entry's fields; throws naming the first bad one. */
export function validateEntry(x: unknown, where = 'log entry'): LogEntry {
  const bad = (why: string): never => {
    throw new Error(`${where}: ${why}`);
  };
  if (typeof x !== 'object' || x === null) return bad('is not an object');
  const e = x as Record<string, unknown>;
  if (typeof e.modelId !== 'string' || !ID.test(e.modelId)) bad('modelId must match [A-Za-z0-9._-]{1,64}');
  if (typeof e.version !== 'number' || !Number.isInteger(e.version) || e.version < 1 || e.version > 2 ** 32 - 1)
    bad('version must be an integer in 1..2^32-1');
  if (typeof e.packageSha256 !== 'string' || !HEX32.test(e.packageSha256)) bad('packageSha256 must be 32 bytes of hex');
  if (typeof e.createdAt !== 'string' || e.createdAt.length > MAX_CREATED_AT) bad('createdAt must be a short string');
  return { modelId: e.modelId, version: e.version, packageSha256: e.packageSha256, createdAt: e.createdAt } as LogEntry;
}

/** Base64 hashes of a proof; throws unless each is 32 bytes and there are at most MAX_PROOF_HASHES. */
export function decodeProof(x: unknown, where: string): Uint8Array[] {
  if (!Array.isArray(x) || x.length > MAX_PROOF_HASHES) throw new Error(`${where}: not a list of at most 64 hashes`);
  return x.map((h) => {
    const b = typeof h === 'string' ? fromBase64(h) : undefined;
    if (!b || b.length !== HASH_BYTES) throw new Error(`${where}: a hash is not 32 bytes of base64`);
    return b;
  });
}

function validateHead(d: Record<string, unknown>, bad: (why: string) => never): void {
  if (d.format !== LOG_FORMAT) bad(`format must be ${LOG_FORMAT} (an older provider?)`);
  if (typeof d.logKey !== 'string' || d.logKey.length > 1024) bad('logKey must be a verifier key');
  if (typeof d.checkpoint !== 'string' || d.checkpoint.length > MAX_NOTE_BYTES) bad('checkpoint must be a signed note');
}

const whole = (x: unknown, max: number): boolean =>
  typeof x === 'number' && Number.isSafeInteger(x) && x >= 0 && x <= max;

/** Checks a proof bundle's shape (not its signatures or proofs: the client's verifier does that). */
export function validateProofBundle(x: unknown): ProofBundle {
  const bad = (why: string): never => {
    throw new Error(`package log proof: ${why}`);
  };
  if (typeof x !== 'object' || x === null) return bad('is not an object');
  const d = x as Record<string, unknown>;
  validateHead(d, bad);
  const out: ProofBundle = { format: LOG_FORMAT, logKey: d.logKey as string, checkpoint: d.checkpoint as string };
  if (d.consistency !== undefined) {
    const c = d.consistency as Record<string, unknown>;
    if (typeof c !== 'object' || c === null || !whole(c.from, Number.MAX_SAFE_INTEGER)) bad('bad consistency proof');
    decodeProof(c.proof, 'package log consistency proof');
    out.consistency = { from: c.from as number, proof: c.proof as string[] };
  }
  if (d.inclusion !== undefined) {
    const i = d.inclusion as Record<string, unknown>;
    if (typeof i !== 'object' || i === null || !whole(i.index, Number.MAX_SAFE_INTEGER)) bad('bad inclusion proof');
    decodeProof(i.proof, 'package log inclusion proof');
    out.inclusion = {
      index: i.index as number,
      entry: validateEntry(i.entry, 'package log inclusion proof'),
      proof: i.proof as string[],
    };
  }
  return out;
}

/** Checks a served log's shape (not its signatures or tree: the client's verifier does that). */
export function validateLogDocument(x: unknown): PackageLogDocument {
  const bad = (why: string): never => {
    throw new Error(`package log: ${why}`);
  };
  if (typeof x !== 'object' || x === null) return bad('is not an object');
  const d = x as Record<string, unknown>;
  validateHead(d, bad);
  if (!Array.isArray(d.entries) || d.entries.length > MAX_LOG_ENTRIES) return bad('entries must be a list');
  return {
    format: LOG_FORMAT,
    logKey: d.logKey as string,
    checkpoint: d.checkpoint as string,
    entries: d.entries.map((e, i) => validateEntry(e, `package log entry ${i}`)),
  };
}
