// Checks the provider's package transparency log (protocol/package-log.ts)
// before a model package or blocklist is used, so that "every client gets the
// same package" (docs/threat-model.md#malicious-provider) rests on something
// outside the session and outside the provider:
//   1. the checkpoint is signed by the log key pinned on this device (or
//      recorded the first time, or configured with --log-key);
//   2. enough witnesses of this device's witness policy cosigned it
//      (protocol/witness-policy.ts): a witness cosigns only heads that extend
//      the ones it cosigned before, so a log shown to this device alone lacks
//      their cosignatures;
//   3. it extends the head this device recorded before (an RFC 6962
//      consistency proof), so the log never shrinks or forks under this device;
//   4. the package is in it (an inclusion proof of its entry, with this hash).
// No Node-only API: the trust state is stored through an injected TrustStore.
import { equalBytes } from '@noble/curves/utils.js';
import { bytesToHex, concatBytes, hexToBytes } from '@noble/hashes/utils.js';
import { parseCheckpoint, type Checkpoint } from '../../protocol/checkpoint.js';
import { MerkleTree, verifyConsistency, verifyInclusion } from '../../protocol/merkle.js';
import {
  decodeProof,
  entryLeafHash,
  LOG_PATH,
  LOG_PROOF_PATH,
  logFingerprint,
  validateLogDocument,
  validateProofBundle,
  type LogEntry,
  type ProofBundle,
} from '../../protocol/package-log.js';
import {
  parseNote,
  parseVerifierKey,
  SIG_ED25519,
  verifyEd25519,
  type VerifierKey,
} from '../../protocol/signed-note.js';
import { cosigners, DEFAULT_WITNESS_POLICY, type Cosigner, type WitnessPolicy } from '../../protocol/witness-policy.js';
import type { VerifiedPackage } from './download.js';

export type PackageLogAlertKind =
  /** The log is signed by another key (or names another log) than the pinned or recorded one. */
  | 'key_changed'
  | 'bad_signature'
  /** Fewer witnesses of this device's policy cosigned the head than its quorum. */
  | 'not_witnessed'
  /** The log is smaller than one this device saw before. */
  | 'rolled_back'
  /** The log does not extend the head this device (or another device) saw before. */
  | 'log_forked'
  /** The served entries do not hash to the signed head. */
  | 'bad_head'
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
  /** The log's verifier key (its name is the log's origin). */
  logKey: string;
  /** 'configured': pinned from the provider's out-of-band publication; 'first-use': taken from the first log seen. */
  keySource: 'configured' | 'first-use';
  size: number;
  /** Hex RFC 6962 root of the head this device last accepted. */
  root: string;
  /** When this device last checked the log (ms since 1970). */
  checkedAt: number;
  /** The policy's witnesses whose cosignature that head carried. */
  cosigners: Cosigner[];
}

/** What a client of format pmf-package-log/1 recorded: a hex Ed25519 key and a hash-chain head. */
export interface LegacyTrust {
  publicKey: string;
  keySource: 'configured' | 'first-use';
  size: number;
  head: string;
}

/** Per provider origin; the CLI keeps it in a file (node-storage.ts), the extension in its storage. */
export interface TrustStore {
  get(origin: string): Promise<LogTrust | LegacyTrust | undefined>;
  put(origin: string, trust: LogTrust): Promise<void>;
}

const isLegacy = (t: LogTrust | LegacyTrust | undefined): t is LegacyTrust => !!t && 'publicKey' in t;

/** Parses a configured log key (--log-key): the vkey `provider-server log-key` prints. */
export function parseLogKey(vkey: string): VerifierKey {
  if (/^[0-9a-f]{64}$/.test(vkey.trim()))
    throw new Error(
      'the package log key is now the log’s verifier key (NAME+KEYID+BASE64, printed by provider-server log-key), not a hex key',
    );
  const k = parseVerifierKey(vkey);
  if (k.type !== SIG_ED25519) throw new Error(`package log key ${k.name}: not an Ed25519 log key (type 1)`);
  return k;
}

function trustedKey(served: string, before: LogTrust | LegacyTrust | undefined, pinned: string | undefined): string {
  const recorded = before && !isLegacy(before) ? before.logKey : undefined;
  if (pinned && recorded && pinned !== recorded)
    throw new PackageLogAlert(
      'key_changed',
      `the configured log key ${pinned} is not the key recorded for this provider (${recorded}); if the provider really moved to a new log, remove the recorded log state`,
    );
  const vkey = pinned ?? recorded ?? served;
  // A device that recorded a format-1 log keeps its key: the new log must be signed by the same Ed25519 key.
  if (isLegacy(before) && bytesToHex(parseVerifierKey(vkey).publicKey) !== before.publicKey)
    throw new PackageLogAlert(
      'key_changed',
      `the log is signed by ${vkey}, not by the recorded key ${before.publicKey}`,
    );
  if (served !== vkey)
    throw new PackageLogAlert('key_changed', `the log is signed by ${served}, not by the trusted key ${vkey}`);
  return vkey;
}

export interface HeadCheck {
  /** The signed note and the key the provider names for it. */
  note: string;
  logKey: string;
  before: LogTrust | LegacyTrust | undefined;
  pinnedKey?: string;
  policy: WitnessPolicy;
  now: number;
  /** Whether the tree `before` recorded (size, root) is a prefix of the checkpoint's tree. */
  extendsBefore: (size: number, root: Uint8Array, cp: Checkpoint) => boolean;
}

/** Steps 1–3: returns the checkpoint and the trust state to record next, or throws a PackageLogAlert. */
export function verifyHead(c: HeadCheck): { checkpoint: Checkpoint; trust: LogTrust } {
  const vkey = trustedKey(c.logKey, c.before, c.pinnedKey);
  const key = parseLogKey(vkey);
  let cp: Checkpoint;
  let note;
  try {
    note = parseNote(c.note);
    cp = parseCheckpoint(note.text);
  } catch (e) {
    throw new PackageLogAlert('bad_signature', `the log's checkpoint is malformed: ${(e as Error).message}`);
  }
  const head = logFingerprint(cp.size, cp.root);
  if (cp.origin !== key.name)
    throw new PackageLogAlert(
      'key_changed',
      `the checkpoint is of log ${cp.origin}, not of the trusted log ${key.name}`,
    );
  if (!verifyEd25519(note, key))
    throw new PackageLogAlert('bad_signature', `the log's signature on head ${head} is invalid`);
  const signed = cosigners(note, c.policy);
  if (signed.length < c.policy.quorum)
    throw new PackageLogAlert(
      'not_witnessed',
      `head ${head} is cosigned by ${signed.length} of the ${c.policy.quorum} witnesses this device requires (${signed.map((s) => s.name).join(', ') || 'none'}): the provider may be showing this device a log other devices do not see, or its witnesses have not cosigned it yet; try again later`,
    );
  const b = c.before;
  if (b && cp.size < b.size)
    throw new PackageLogAlert(
      'rolled_back',
      `the log has ${cp.size} entries, but this device saw ${b.size} before: the provider is showing an older head`,
    );
  if (b && !isLegacy(b) && !c.extendsBefore(b.size, hexToBytes(b.root), cp))
    throw new PackageLogAlert(
      'log_forked',
      `head ${head} does not extend ${logFingerprint(b.size, b.root)}, which this device saw before: the provider rewrote or forked its log`,
    );
  const keySource = c.pinnedKey ? 'configured' : (b?.keySource ?? 'first-use');
  return {
    checkpoint: cp,
    trust: { logKey: vkey, keySource, size: cp.size, root: bytesToHex(cp.root), checkedAt: c.now, cosigners: signed },
  };
}

/** Step 4: refuses a package the bundle does not prove to be in the checkpoint's tree under its modelId and version. */
export function checkIncluded(b: ProofBundle, cp: Checkpoint, modelId: string, version: number, sha256: string): void {
  const what = `model ${modelId} v${version}`;
  const e = b.inclusion?.entry;
  if (!b.inclusion || !e || e.modelId !== modelId || e.version !== version)
    throw new PackageLogAlert('not_in_log', `${what} (${sha256}) is not in the package log`);
  if (e.packageSha256 !== sha256)
    throw new PackageLogAlert(
      'not_in_log',
      `${what}: this package (${sha256}) is not the logged one (${e.packageSha256}); this device may have been served a package other clients do not get`,
    );
  const proof = decodeProof(b.inclusion.proof, 'package log inclusion proof');
  if (!verifyInclusion(entryLeafHash(e), b.inclusion.index, cp.size, proof, cp.root))
    throw new PackageLogAlert('not_in_log', `the log's proof that it lists ${what} does not verify`);
}

function checkOneHashPerVersion(entries: readonly LogEntry[]): void {
  const seen = new Map<string, LogEntry>();
  for (const e of entries) {
    const key = `${e.modelId} v${e.version}`;
    const first = seen.get(key);
    if (first && first.packageSha256 !== e.packageSha256)
      throw new PackageLogAlert(
        'hash_changed',
        `model ${key} is logged with two package hashes (${first.packageSha256}, then ${e.packageSha256}): the provider changed a published package without a version bump`,
      );
    seen.set(key, first ?? e);
  }
}

/** A head another device or person reports: its size and its root (in full or at least the fingerprint's 32 hex). */
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
  const tree = new MerkleTree(entries.map(entryLeafHash));
  if (!bytesToHex(tree.root(other.size)).startsWith(other.head))
    throw new PackageLogAlert(
      'log_forked',
      `the other head ${logFingerprint(other.size, other.head)} is not a prefix of this device's log ${logFingerprint(entries.length, tree.root())}: the provider shows different logs to different clients`,
    );
  return other.size === entries.length ? 'same' : 'other-behind';
}

/** A proof bundle: a checkpoint note (≤ 32 KiB) and two proofs of at most 64 hashes. */
const MAX_BUNDLE_BYTES = 64 * 1024;
/** The whole log: MAX_LOG_ENTRIES entries of at most about 300 bytes of JSON each. */
const MAX_LOG_BYTES = 32 * 1024 * 1024;

export interface LogVerifierOptions {
  /** The provider's HTTP base URL; trust is recorded per origin. */
  baseUrl: string;
  trust: TrustStore;
  /** The log's verifier key the provider publishes out of band. Without it, the first log's key is trusted and recorded. */
  pinnedKey?: string;
  /** This device's witness policy, read at every check (the user may change it). */
  policy?: () => WitnessPolicy | Promise<WitnessPolicy>;
  fetch?: typeof fetch;
  now?: () => number;
}

export interface VerifiedHead {
  checkpoint: Checkpoint;
  trust: LogTrust;
  fingerprint: string;
  /** No key was pinned or recorded before: this check trusted the log's key on first use. */
  firstUse: boolean;
  policy: WitnessPolicy;
}

export class PackageLogVerifier {
  constructor(private readonly opts: LogVerifierOptions) {
    if (opts.pinnedKey !== undefined) parseLogKey(opts.pinnedKey);
  }

  /** A JSON answer of at most `maxBytes`: a provider cannot make this device buffer more. */
  private async get(path: string, maxBytes: number): Promise<unknown> {
    const origin = new URL(this.opts.baseUrl).origin;
    const r = await (this.opts.fetch ?? fetch)(new URL(path, this.opts.baseUrl));
    if (!r.ok) throw new Error(`package log: HTTP ${r.status} from ${origin}`);
    const chunks: Uint8Array[] = [];
    let size = 0;
    const reader = r.body?.getReader();
    for (let part = await reader?.read(); part && !part.done; part = await reader!.read()) {
      size += part.value.length;
      if (size > maxBytes) {
        await reader!.cancel();
        throw new Error(`package log: the answer from ${origin} is larger than ${maxBytes} bytes`);
      }
      chunks.push(part.value);
    }
    return JSON.parse(new TextDecoder().decode(concatBytes(...chunks)));
  }

  /** Verifies a head (steps 1–3) against the recorded state and, once `check` passes too, records it. */
  private async accept(
    served: { note: string; logKey: string },
    extendsBefore: HeadCheck['extendsBefore'],
    check: (cp: Checkpoint) => void,
  ): Promise<VerifiedHead> {
    const origin = new URL(this.opts.baseUrl).origin;
    const before = await this.opts.trust.get(origin);
    const policy = (await this.opts.policy?.()) ?? DEFAULT_WITNESS_POLICY;
    const now = this.opts.now?.() ?? Date.now();
    const { checkpoint, trust } = verifyHead({
      ...served,
      before,
      pinnedKey: this.opts.pinnedKey,
      policy,
      now,
      extendsBefore,
    });
    check(checkpoint);
    await this.opts.trust.put(origin, trust);
    return {
      checkpoint,
      trust,
      fingerprint: logFingerprint(trust.size, trust.root),
      firstUse: !before && !this.opts.pinnedKey,
      policy,
    };
  }

  /** Refuses a package unless a head this device accepts proves it is logged under (modelId, version) with this hash. */
  async checkLogged(modelId: string, version: number, sha256: string): Promise<VerifiedHead> {
    const before = await this.opts.trust.get(new URL(this.opts.baseUrl).origin);
    const q = new URLSearchParams({ model: modelId, version: String(version) });
    if (before && before.size > 0) q.set('old', String(before.size));
    const bundle = validateProofBundle(await this.get(`${LOG_PROOF_PATH}?${q}`, MAX_BUNDLE_BYTES));
    return this.accept(
      { note: bundle.checkpoint, logKey: bundle.logKey },
      (size, root, cp) => {
        const proof =
          bundle.consistency?.from === size ? decodeProof(bundle.consistency.proof, 'consistency proof') : [];
        return verifyConsistency(size, cp.size, root, cp.root, proof);
      },
      (cp) => checkIncluded(bundle, cp, modelId, version, sha256),
    );
  }

  /** download.ts's logCheck: the verified package must be the one its (modelId, version) is logged with. */
  checkPackage(pkg: VerifiedPackage): Promise<VerifiedHead> {
    return this.checkLogged(pkg.header.modelId, pkg.header.modelVersion, pkg.sha256);
  }

  /** Fetches every entry, checks them against an accepted head, and returns them (the CLI's `log`). */
  async audit(): Promise<VerifiedHead & { entries: LogEntry[] }> {
    const doc = validateLogDocument(await this.get(LOG_PATH, MAX_LOG_BYTES));
    const tree = new MerkleTree(doc.entries.map(entryLeafHash));
    const matches = (cp: Checkpoint): boolean => cp.size === tree.size && equalBytes(tree.root(), cp.root);
    const verified = await this.accept(
      { note: doc.checkpoint, logKey: doc.logKey },
      // Checked against the entries themselves; `check` below refuses entries that are not the head's.
      (size, root, cp) => !matches(cp) || (size <= tree.size && equalBytes(tree.root(size), root)),
      (cp) => {
        if (!matches(cp))
          throw new PackageLogAlert('bad_head', `the ${tree.size} served entries do not hash to the signed head`);
        checkOneHashPerVersion(doc.entries);
      },
    );
    return { ...verified, entries: doc.entries };
  }
}
