// Checks the provider's package transparency log (protocol/package-log.ts)
// before a model package is used, so that "every client gets the same
// package" (docs/threat-model.md#malicious-provider) rests on something outside the session: the
// log is signed with a key pinned on this device, must only grow, and must
// name exactly one package hash per (modelId, version). The head this device
// saw is recorded; its fingerprint is compared across devices and people
// (compareHeads) to catch a provider that shows one user a different log.
// No Node-only API: the trust state is stored through an injected TrustStore.
import { ed25519 } from '@noble/curves/ed25519.js';
import { hexToBytes } from '@noble/hashes/utils.js';
import {
  chainHeads,
  headMessage,
  LOG_PATH,
  logFingerprint,
  validateLogDocument,
  type LogEntry,
  type PackageLogDocument,
} from '../../protocol/package-log.js';
import type { VerifiedPackage } from './download.js';

export type PackageLogAlertKind =
  /** The log is signed by another key than the pinned (or first-seen) one. */
  | 'key_changed'
  | 'bad_signature'
  /** The served entries do not hash to the signed head. */
  | 'bad_head'
  /** Fewer entries than this device saw before. */
  | 'log_shrunk'
  /** The entries this device saw before were rewritten (or another log of the same size was served). */
  | 'log_forked'
  /** One (modelId, version) with two package hashes: a changed package without a version bump. */
  | 'hash_changed'
  /** The package in use is not the one the log lists for its (modelId, version). */
  | 'not_in_log';

/** The provider's log does not vouch for the package: refuse it and tell the user. */
export class PackageLogAlert extends Error {
  constructor(
    readonly kind: PackageLogAlertKind,
    message: string,
  ) {
    super(`package log alert (${kind}): ${message}`);
    this.name = 'PackageLogAlert';
  }
}

/** What this device remembers about one provider's log. */
export interface LogTrust {
  /** Hex Ed25519 public key of the log. */
  publicKey: string;
  /** 'configured': pinned from the provider's out-of-band publication; 'first-use': taken from the first log seen. */
  keySource: 'configured' | 'first-use';
  size: number;
  head: string;
}

/** Per provider origin; the CLI keeps it in a file (node-storage.ts), the extension in its storage. */
export interface TrustStore {
  get(origin: string): Promise<LogTrust | undefined>;
  put(origin: string, trust: LogTrust): Promise<void>;
}

function verifySignature(doc: PackageLogDocument, publicKey: string): boolean {
  try {
    return ed25519.verify(hexToBytes(doc.signature), headMessage(doc.size, doc.head), hexToBytes(publicKey));
  } catch {
    return false; // a malformed key or signature is a bad signature, not a crash
  }
}

function checkOneHashPerVersion(entries: readonly LogEntry[]): void {
  const seen = new Map<string, LogEntry>();
  for (const e of entries) {
    const key = `${e.modelId} v${e.version}`;
    const first = seen.get(key);
    if (first && first.packageSha256 !== e.packageSha256) {
      throw new PackageLogAlert(
        'hash_changed',
        `model ${key} is logged with two package hashes (${first.packageSha256}, then ${e.packageSha256}): the provider changed a published package without a version bump`,
      );
    }
    seen.set(key, first ?? e);
  }
}

/**
 * Verifies a served log against what this device recorded (undefined on first
 * contact) and returns the trust state to record next. `pinnedKey` is the
 * provider's out-of-band published key; without it and without a recorded
 * key, the log's own key is trusted on first use.
 */
export function verifyLog(doc: PackageLogDocument, trust: LogTrust | undefined, pinnedKey?: string): LogTrust {
  const publicKey = pinnedKey ?? trust?.publicKey ?? doc.publicKey;
  if (trust && trust.publicKey !== publicKey) {
    throw new PackageLogAlert(
      'key_changed',
      `the configured log key ${publicKey} is not the key recorded for this provider (${trust.publicKey}); if the provider really rotated its key, remove the recorded log state`,
    );
  }
  if (doc.publicKey !== publicKey) {
    throw new PackageLogAlert(
      'key_changed',
      `the log is signed by ${doc.publicKey}, not by the trusted key ${publicKey}`,
    );
  }
  if (!verifySignature(doc, publicKey)) {
    throw new PackageLogAlert(
      'bad_signature',
      `the signature on log head ${logFingerprint(doc.size, doc.head)} is invalid`,
    );
  }
  const heads = chainHeads(doc.entries);
  if (heads[doc.size] !== doc.head) {
    throw new PackageLogAlert('bad_head', `the ${doc.size} served entries do not hash to the signed head`);
  }
  if (trust && doc.size < trust.size) {
    throw new PackageLogAlert(
      'log_shrunk',
      `the log has ${doc.size} entries, but this device saw ${logFingerprint(trust.size, trust.head)} before`,
    );
  }
  if (trust && heads[trust.size] !== trust.head) {
    throw new PackageLogAlert(
      'log_forked',
      `the first ${trust.size} entries no longer hash to ${logFingerprint(trust.size, trust.head)}, which this device saw before: the provider rewrote or forked its log`,
    );
  }
  checkOneHashPerVersion(doc.entries);
  return {
    publicKey,
    keySource: pinnedKey ? 'configured' : (trust?.keySource ?? 'first-use'),
    size: doc.size,
    head: doc.head,
  };
}

/** Refuses a package the log does not list under its own modelId and version. */
export function checkLogged(entries: readonly LogEntry[], modelId: string, version: number, sha256: string): void {
  const e = entries.find((x) => x.modelId === modelId && x.version === version);
  if (!e) throw new PackageLogAlert('not_in_log', `model ${modelId} v${version} (${sha256}) is not in the package log`);
  if (e.packageSha256 !== sha256) {
    throw new PackageLogAlert(
      'not_in_log',
      `model ${modelId} v${version}: this package (${sha256}) is not the logged one (${e.packageSha256}); this device may have been served a package other clients do not get`,
    );
  }
}

/** A head another device or person reports: its size and its hash (in full or at least the fingerprint's 32 hex). */
export interface HeadRef {
  size: number;
  head: string;
}

/** Parses logFingerprint's "size:hex" form. */
export function parseFingerprint(text: string): HeadRef {
  const m = /^(\d{1,10}):([0-9a-f]{32,64})$/.exec(text.trim().toLowerCase());
  if (!m) throw new Error(`not a package log fingerprint: ${text} (expected SIZE:HEX, e.g. 3:0123…, 32 to 64 hex)`);
  return { size: Number(m[1]), head: m[2] };
}

export type GossipResult = 'same' | 'other-behind' | 'other-ahead';

/**
 * Gossip check: one of two honest views of the log is a prefix of the other.
 * `entries` is a log this device verified. 'other-ahead' cannot be decided
 * here: fetch the log again and compare once more. Throws a log_forked alert
 * when the other head is not a prefix of this log.
 */
export function compareHeads(entries: readonly LogEntry[], other: HeadRef): GossipResult {
  if (other.size > entries.length) return 'other-ahead';
  const heads = chainHeads(entries);
  if (!heads[other.size].startsWith(other.head)) {
    throw new PackageLogAlert(
      'log_forked',
      `the other head ${logFingerprint(other.size, other.head)} is not a prefix of this device's log ${logFingerprint(entries.length, heads[entries.length])}: the provider shows different logs to different clients`,
    );
  }
  return other.size === entries.length ? 'same' : 'other-behind';
}

export interface LogVerifierOptions {
  /** The provider's HTTP base URL; trust is recorded per origin. */
  baseUrl: string;
  trust: TrustStore;
  /** Hex Ed25519 key the provider publishes out of band. Without it, the first log's key is trusted and recorded. */
  pinnedKey?: string;
  fetch?: typeof fetch;
}

export interface VerifiedLog {
  log: PackageLogDocument;
  trust: LogTrust;
  fingerprint: string;
  /** No key was pinned or recorded before: this run trusted the log's key on first use. */
  firstUse: boolean;
}

export class PackageLogVerifier {
  constructor(private readonly opts: LogVerifierOptions) {
    if (opts.pinnedKey !== undefined && !/^[0-9a-f]{64}$/.test(opts.pinnedKey))
      throw new Error('the package log key must be 64 lowercase hex characters (an Ed25519 public key)');
  }

  /** Fetches the log, verifies it against the recorded state and records the new head. */
  async fetchVerified(): Promise<VerifiedLog> {
    const origin = new URL(this.opts.baseUrl).origin;
    const r = await (this.opts.fetch ?? fetch)(new URL(LOG_PATH, this.opts.baseUrl));
    if (!r.ok) throw new Error(`package log: HTTP ${r.status} from ${origin}`);
    const log = validateLogDocument(await r.json());
    const before = await this.opts.trust.get(origin);
    const trust = verifyLog(log, before, this.opts.pinnedKey);
    await this.opts.trust.put(origin, trust);
    return {
      log,
      trust,
      fingerprint: logFingerprint(trust.size, trust.head),
      firstUse: !before && !this.opts.pinnedKey,
    };
  }

  /** download.ts's logCheck: the verified package must be the one its (modelId, version) is logged with. */
  async checkPackage(pkg: VerifiedPackage): Promise<VerifiedLog> {
    const verified = await this.fetchVerified();
    checkLogged(verified.log.entries, pkg.header.modelId, pkg.header.modelVersion, pkg.sha256);
    return verified;
  }
}
