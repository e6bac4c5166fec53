// The provider's package transparency log (format: protocol/package-log.ts).
// Every model version the provider serves is appended once, in order, to
// <dataDir>/package-log.jsonl and never changed; the head is signed with the
// Ed25519 key in <dataDir>/package-log.key (generated on first run, mode
// 0600, never logged). Clients pin the public key, which the provider
// publishes out of band, and alert when the log forks, shrinks or gives a
// version a second hash.
import fs from 'node:fs';
import path from 'node:path';
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import {
  chainHeads,
  headMessage,
  LOG_FORMAT,
  nextHead,
  validateEntry,
  type LogEntry,
  type PackageLogDocument,
} from '../../protocol/package-log.js';
import { readSecretFile, writeSecretFile } from './models.js';

export const LOG_FILE = 'package-log.jsonl';
export const LOG_KEY_FILE = 'package-log.key';

export class PackageLog {
  readonly publicKey: string;
  private head: string;
  private signed: { size: number; signature: string } | undefined;

  private constructor(
    private readonly file: string,
    private readonly secretKey: Uint8Array,
    private readonly entries: LogEntry[],
  ) {
    this.publicKey = bytesToHex(ed25519.getPublicKey(secretKey));
    this.head = chainHeads(entries).at(-1)!;
  }

  /** Opens the log in dataDir, creating the signing key on first run. */
  static open(dataDir: string): PackageLog {
    fs.mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    const keyFile = path.join(dataDir, LOG_KEY_FILE);
    if (!fs.existsSync(keyFile)) writeSecretFile(keyFile, ed25519.utils.randomSecretKey());
    const secretKey = readSecretFile(keyFile);
    if (secretKey.length !== 32) throw new Error(`${keyFile} is not a 32-byte Ed25519 secret key`);
    const file = path.join(dataDir, LOG_FILE);
    const lines = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : [];
    const entries = lines.map((l, i) => validateEntry(JSON.parse(l), `${file} line ${i + 1}`));
    return new PackageLog(file, secretKey, entries);
  }

  /**
   * Appends the versions not in the log yet, in the order given. A version
   * already logged with another package hash is refused: a published
   * version's bytes must never change (build a new version instead).
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
    return added;
  }

  private append(entry: LogEntry): void {
    const fd = fs.openSync(this.file, 'a', 0o644);
    try {
      fs.writeSync(fd, `${JSON.stringify(entry)}\n`);
      fs.fsyncSync(fd); // on disk before anyone is served a head that includes it
    } finally {
      fs.closeSync(fd);
    }
    this.entries.push(entry);
    this.head = bytesToHex(nextHead(hexToBytes(this.head), entry));
  }

  /** The signed log as served at LOG_PATH. */
  document(): PackageLogDocument {
    const size = this.entries.length;
    if (this.signed?.size !== size) {
      this.signed = { size, signature: bytesToHex(ed25519.sign(headMessage(size, this.head), this.secretKey)) };
    }
    return {
      format: LOG_FORMAT,
      publicKey: this.publicKey,
      size,
      head: this.head,
      signature: this.signed.signature,
      entries: [...this.entries],
    };
  }
}
