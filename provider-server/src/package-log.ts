// The provider's package transparency log (format: protocol/package-log.ts).
// Every model and blocklist version the provider serves is appended once, in
// order, to <dataDir>/package-log.jsonl and never changed. Each new size gets a
// C2SP checkpoint signed with the Ed25519 key in <dataDir>/package-log.key
// (generated on first run, mode 0600, never logged), kept with the witnesses'
// cosignatures (log-witnesses.ts) in <dataDir>/package-log.checkpoint.
//
// At start the log is checked against that signed checkpoint, and a log that
// does not match is refused with what is wrong: a replaced or missing key, an
// edited, truncated or reordered log file, a version logged twice, a changed
// origin. A log without a checkpoint (one written by the hash-chain format
// pmf-package-log/1, whose entries are the same) is signed as it stands; the
// witnesses it is then submitted to refuse it if it is not what they saw.
import fs from 'node:fs';
import path from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { equalBytes } from '@noble/curves/utils.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { formatCheckpoint, parseCheckpoint, type Checkpoint } from '../../protocol/checkpoint.js';
import { MerkleTree } from '../../protocol/merkle.js';
import {
  entryLeafHash,
  LOG_FORMAT,
  logFingerprint,
  validateEntry,
  type LogEntry,
  type PackageLogDocument,
  type ProofBundle,
} from '../../protocol/package-log.js';
import {
  formatNote,
  formatVerifierKey,
  parseNote,
  parseVerifierKey,
  SIG_ED25519,
  signEd25519,
  toBase64,
  verifyEd25519,
  type NoteSignature,
  type SignedNote,
} from '../../protocol/signed-note.js';
import { readSecretFile, writeSecretFile } from './secret-file.js';

export const LOG_FILE = 'package-log.jsonl';
export const LOG_KEY_FILE = 'package-log.key';
export const CHECKPOINT_FILE = 'package-log.checkpoint';

/** The origin (checkpoint line 1, key name) when none is configured: stable as long as the key is. */
export function defaultOrigin(publicKey: Uint8Array): string {
  return `pmf-package-log/${bytesToHex(sha256(publicKey)).slice(0, 16)}`;
}

/** A log the provider must not start with: the message says what is wrong and what to do. */
export class BrokenLogError extends Error {
  constructor(message: string) {
    super(`package log: ${message}`);
    this.name = 'BrokenLogError';
  }
}

function readEntries(file: string): LogEntry[] {
  const lines = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n') : [];
  const entries: LogEntry[] = [];
  const seen = new Map<string, number>();
  for (const [i, line] of lines.entries()) {
    if (line === '') continue;
    let entry: LogEntry;
    try {
      entry = validateEntry(JSON.parse(line), `${file} line ${i + 1}`);
    } catch (e) {
      throw new BrokenLogError(`${(e as Error).message}; restore the file from a backup`);
    }
    const key = `${entry.modelId} v${entry.version}`;
    if (seen.has(key))
      throw new BrokenLogError(
        `${file} line ${i + 1} logs ${key} again (first on line ${seen.get(key)}): the file was edited; restore it from a backup`,
      );
    seen.set(key, i + 1);
    entries.push(entry);
  }
  return entries;
}

export class PackageLog {
  readonly publicKey: Uint8Array;
  /** This log's verifier key: give it to witness operators and publish it for clients to pin. */
  readonly vkey: string;
  private readonly tree: MerkleTree;
  private note!: SignedNote;

  private constructor(
    private readonly dir: string,
    private readonly secretKey: Uint8Array,
    readonly origin: string,
    private readonly entries: LogEntry[],
    stored: SignedNote | undefined,
  ) {
    this.publicKey = ed25519.getPublicKey(secretKey);
    this.vkey = formatVerifierKey(origin, SIG_ED25519, this.publicKey);
    this.tree = new MerkleTree(entries.map(entryLeafHash));
    if (stored && parseCheckpoint(stored.text).size === entries.length) this.note = stored;
    else this.sign();
  }

  /**
   * Opens the log in dataDir, checking it against its signed checkpoint
   * (throws BrokenLogError), and creates the key on the first run.
   * `origin` is the configured origin (packageLog.origin); by default one
   * derived from the key.
   */
  static open(dataDir: string, origin?: string): PackageLog {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const keyFile = path.join(dataDir, LOG_KEY_FILE);
    const logFile = path.join(dataDir, LOG_FILE);
    const checkpointFile = path.join(dataDir, CHECKPOINT_FILE);
    const entries = readEntries(logFile);
    const storedText = fs.existsSync(checkpointFile) ? fs.readFileSync(checkpointFile, 'utf8') : undefined;
    if (!fs.existsSync(keyFile)) {
      if (storedText !== undefined || entries.length > 0)
        throw new BrokenLogError(
          `${keyFile} is missing but the log already has ${entries.length} entries: restore the key from a backup (a new key would start another log, which clients and witnesses refuse)`,
        );
      writeSecretFile(keyFile, ed25519.utils.randomSecretKey());
    }
    const secretKey = readSecretFile(keyFile);
    if (secretKey.length !== 32) throw new BrokenLogError(`${keyFile} is not a 32-byte Ed25519 secret key`);
    const stored = storedText === undefined ? undefined : parseStored(storedText, checkpointFile);
    // Without a configured origin the log keeps the one it was signed under, so a replaced key shows as one.
    const logOrigin = origin ?? stored?.checkpoint.origin ?? defaultOrigin(ed25519.getPublicKey(secretKey));
    if (stored) checkStored(stored, { checkpointFile, logFile }, logOrigin, secretKey, entries);
    return new PackageLog(dataDir, secretKey, logOrigin, entries, stored?.note);
  }

  get size(): number {
    return this.entries.length;
  }

  /** The tree head as a fingerprint (size:first 32 hex of the root) for logs and people. */
  get fingerprint(): string {
    return logFingerprint(this.size, this.tree.root());
  }

  /**
   * Appends the versions not in the log yet, in the order given, and signs
   * the new head. A version already logged with another package hash is
   * refused: a published version's bytes must never change (build a new
   * version instead).
   */
  record(versions: readonly LogEntry[]): LogEntry[] {
    const added: LogEntry[] = [];
    for (const v of versions) {
      const logged = this.entries.find((e) => e.modelId === v.modelId && e.version === v.version);
      if (logged?.packageSha256 === v.packageSha256) continue;
      if (logged) {
        throw new Error(
          `model ${v.modelId} v${v.version}: package ${v.packageSha256} differs from the logged ${logged.packageSha256}; a published version must never change`,
        );
      }
      const entry = validateEntry(v);
      this.append(entry);
      added.push(entry);
    }
    if (added.length > 0) this.sign();
    return added;
  }

  private append(entry: LogEntry): void {
    const fd = fs.openSync(path.join(this.dir, LOG_FILE), 'a', 0o644);
    try {
      fs.writeSync(fd, `${JSON.stringify(entry)}\n`);
      fs.fsyncSync(fd); // on disk before anyone is served a head that includes it
    } finally {
      fs.closeSync(fd);
    }
    this.entries.push(entry);
    this.tree.append(entryLeafHash(entry));
  }

  /** The latest checkpoint (not yet cosigned). */
  get checkpoint(): Checkpoint {
    return { origin: this.origin, size: this.size, root: this.tree.root(), extensions: [] };
  }

  private sign(): void {
    const text = formatCheckpoint(this.checkpoint);
    this.note = { text, signatures: [signEd25519(text, this.origin, this.secretKey)] };
    this.save();
  }

  private save(): void {
    const file = path.join(this.dir, CHECKPOINT_FILE);
    const fd = fs.openSync(`${file}.tmp`, 'w', 0o644);
    try {
      fs.writeSync(fd, formatNote(this.note));
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(`${file}.tmp`, file);
  }

  /** The latest checkpoint as a signed note, with the cosignatures it has. */
  signedCheckpoint(): string {
    return formatNote(this.note);
  }

  /** The latest checkpoint signed by the log alone: what witnesses are sent. */
  logSignedCheckpoint(): string {
    return formatNote({ text: this.note.text, signatures: this.note.signatures.slice(0, 1) });
  }

  /**
   * Adds witness cosignatures of `text` (checked by the caller), replacing an
   * older one of the same witness; ignored when the log has moved on.
   */
  addCosignatures(text: string, cosignatures: readonly NoteSignature[]): void {
    if (text !== this.note.text || cosignatures.length === 0) return;
    const fresh = new Set(cosignatures.map((c) => `${c.name} ${c.keyId}`));
    const kept = this.note.signatures.filter((s, i) => i === 0 || !fresh.has(`${s.name} ${s.keyId}`));
    this.note = { text, signatures: [...kept, ...cosignatures] };
    this.save();
  }

  /** Audit path from tree size m to the current size (RFC 6962), for witnesses. */
  consistencyProof(m: number): Uint8Array[] {
    return this.tree.consistencyProof(m);
  }

  /** The checkpoint and proofs a client asks for (see ProofBundle); out-of-range requests get no proof. */
  bundle(q: { old?: number; modelId?: string; version?: number }): ProofBundle {
    const out: ProofBundle = { format: LOG_FORMAT, logKey: this.vkey, checkpoint: this.signedCheckpoint() };
    if (q.old !== undefined && q.old > 0 && q.old < this.size)
      out.consistency = { from: q.old, proof: this.tree.consistencyProof(q.old).map(toBase64) };
    const index = this.entries.findIndex((e) => e.modelId === q.modelId && e.version === q.version);
    if (index >= 0)
      out.inclusion = { index, entry: this.entries[index], proof: this.tree.inclusionProof(index).map(toBase64) };
    return out;
  }

  /** The whole log as served at LOG_PATH. */
  document(): PackageLogDocument {
    return { format: LOG_FORMAT, logKey: this.vkey, checkpoint: this.signedCheckpoint(), entries: [...this.entries] };
  }
}

function parseStored(text: string, file: string): { note: SignedNote; checkpoint: Checkpoint } {
  try {
    const note = parseNote(text);
    return { note, checkpoint: parseCheckpoint(note.text) };
  } catch (e) {
    throw new BrokenLogError(`${file} is damaged (${(e as Error).message}); restore it from a backup`);
  }
}

/**
 * Checks the stored checkpoint against the origin, the key and the entries,
 * and puts the log's own signature first (addCosignatures keeps it there).
 */
function checkStored(
  stored: { note: SignedNote; checkpoint: Checkpoint },
  files: { checkpointFile: string; logFile: string },
  origin: string,
  secretKey: Uint8Array,
  entries: readonly LogEntry[],
): void {
  const { note, checkpoint: cp } = stored;
  const file = files.checkpointFile;
  if (cp.origin !== origin)
    throw new BrokenLogError(
      `${file} is the checkpoint of log ${cp.origin}, but this provider's log is ${origin}: witnesses and clients know the log by its origin; set packageLog.origin to ${cp.origin}`,
    );
  const key = parseVerifierKey(formatVerifierKey(origin, SIG_ED25519, ed25519.getPublicKey(secretKey)));
  if (!verifyEd25519(note, key))
    throw new BrokenLogError(
      `${file} is not signed by ${LOG_KEY_FILE} (${key.name}+${key.keyId.toString(16).padStart(8, '0')}): the log key was replaced; restore the original key (clients and witnesses refuse a log signed by another key)`,
    );
  if (cp.size > entries.length)
    throw new BrokenLogError(
      `${files.logFile} has ${entries.length} entries but the signed checkpoint covers ${cp.size}: entries were removed; restore the file from a backup`,
    );
  const root = new MerkleTree(entries.slice(0, cp.size).map(entryLeafHash)).root();
  if (!equalBytes(root, cp.root))
    throw new BrokenLogError(
      `${files.logFile} was edited: its first ${cp.size} entries hash to ${logFingerprint(cp.size, root)}, not to the signed checkpoint ${logFingerprint(cp.size, cp.root)}; restore it from a backup`,
    );
  const own = (s: NoteSignature): boolean => s.name === key.name && s.keyId === key.keyId;
  note.signatures = [...note.signatures.filter(own).slice(0, 1), ...note.signatures.filter((s) => !own(s))];
}
