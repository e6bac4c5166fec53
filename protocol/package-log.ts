// The package transparency log, shared by provider-server (appends and signs)
// and client (verifies). docs/threat-model.md#malicious-provider: a provider that encrypts one
// user's model with large noise can leak that user's features past the
// flooding, so every client must use the same package per model version, and
// the package hash the provider announces in a session needs an anchor
// outside the session. The log is that anchor: an append-only list of
// (modelId, version, packageSha256, createdAt) whose head is signed with an
// Ed25519 key the provider publishes out of band. Clients record the head
// they saw and compare it across devices and with other people.
//
// Hash chain (each entry commits to everything before it, so dropping or
// rewriting an old entry changes the head at every later size):
//   head_0 = SHA-256("pmf-package-log/1 empty")
//   head_i = SHA-256("pmf-package-log/1 entry\0" ‖ head_{i-1} ‖ encodeEntry(entry_i))
// Signed message: "pmf-package-log/1 head\0" ‖ u64 BE size ‖ head_size.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex, concatBytes, hexToBytes, utf8ToBytes } from '@noble/hashes/utils.js';

export const LOG_FORMAT = 'pmf-package-log/1';
/** Well-known URLs on the provider's HTTP origin. */
export const LOG_PATH = '/.well-known/pmf-package-log.json';
export const LOG_KEY_PATH = '/.well-known/pmf-package-log-key.json';

export interface LogEntry {
  modelId: string;
  version: number;
  /** Hex SHA-256 of the whole package file (its ETag). */
  packageSha256: string;
  /** ISO time the version was built. */
  createdAt: string;
}

export interface SignedHead {
  size: number;
  /** Hex head_size. */
  head: string;
  /** Hex Ed25519 signature over headMessage(size, head). */
  signature: string;
}

/** What GET LOG_PATH returns. */
export interface PackageLogDocument extends SignedHead {
  format: typeof LOG_FORMAT;
  /** Hex Ed25519 public key. Informational: clients verify with the key they pinned. */
  publicKey: string;
  entries: LogEntry[];
}

/** What GET LOG_KEY_PATH returns. */
export interface PackageLogKey {
  format: typeof LOG_FORMAT;
  alg: 'ed25519';
  publicKey: string;
}

const HEX32 = /^[0-9a-f]{64}$/;
const ID = /^[A-Za-z0-9._-]{1,64}$/;
const MAX_CREATED_AT = 64;

export const EMPTY_HEAD = sha256(utf8ToBytes(`${LOG_FORMAT} empty`));
const ENTRY_TAG = utf8ToBytes(`${LOG_FORMAT} entry\0`);
const HEAD_TAG = utf8ToBytes(`${LOG_FORMAT} head\0`);

/** The low `bytes` bytes of an unsigned big-endian integer (callers validate the range). */
function uint(value: number, bytes: 2 | 4 | 8): Uint8Array {
  const out = new Uint8Array(8);
  new DataView(out.buffer).setBigUint64(0, BigInt(value));
  return out.subarray(8 - bytes);
}

/** Length-prefixed fields, so no two different entries encode to the same bytes. */
function encodeEntry(e: LogEntry): Uint8Array {
  const id = utf8ToBytes(e.modelId);
  const at = utf8ToBytes(e.createdAt);
  return concatBytes(uint(id.length, 2), id, uint(e.version, 4), hexToBytes(e.packageSha256), uint(at.length, 2), at);
}

export function nextHead(prev: Uint8Array, e: LogEntry): Uint8Array {
  return sha256(concatBytes(ENTRY_TAG, prev, encodeEntry(e)));
}

/** heads[k] = the head after the first k entries (heads[0] = EMPTY_HEAD), as hex. */
export function chainHeads(entries: readonly LogEntry[]): string[] {
  const heads: Uint8Array[] = [EMPTY_HEAD];
  for (const e of entries) heads.push(nextHead(heads[heads.length - 1], e));
  return heads.map(bytesToHex);
}

/** The bytes the log key signs for a head. */
export function headMessage(size: number, head: string): Uint8Array {
  return concatBytes(HEAD_TAG, uint(size, 8), hexToBytes(head));
}

/**
 * A short string two devices or two people can read to each other: the size
 * and the first 128 bits of the head. 128 rather than 64 bits because the
 * provider builds both logs of a fork and could grind a 64-bit collision
 * (2^32 work) by varying createdAt.
 */
export function logFingerprint(size: number, head: string): string {
  return `${size}:${head.slice(0, 32)}`;
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

/** Checks a served log's shape (not its signature or chain: the client's verifier does that). */
export function validateLogDocument(x: unknown): PackageLogDocument {
  const bad = (why: string): never => {
    throw new Error(`package log: ${why}`);
  };
  if (typeof x !== 'object' || x === null) return bad('is not an object');
  const d = x as Record<string, unknown>;
  if (d.format !== LOG_FORMAT) bad(`format must be ${LOG_FORMAT}`);
  if (typeof d.publicKey !== 'string' || !HEX32.test(d.publicKey)) bad('publicKey must be 32 bytes of hex');
  if (typeof d.head !== 'string' || !HEX32.test(d.head)) bad('head must be 32 bytes of hex');
  if (typeof d.signature !== 'string' || !/^[0-9a-f]{128}$/.test(d.signature)) bad('signature must be 64 bytes of hex');
  if (!Array.isArray(d.entries)) return bad('entries must be a list');
  if (d.size !== d.entries.length) bad(`size ${String(d.size)} does not match the ${d.entries.length} entries`);
  return {
    format: LOG_FORMAT,
    publicKey: d.publicKey as string,
    size: d.size as number,
    head: d.head as string,
    signature: d.signature as string,
    entries: d.entries.map((e, i) => validateEntry(e, `package log entry ${i}`)),
  };
}
