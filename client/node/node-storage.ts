// PackageStorage and the package log's TrustStore on the local file system,
// for the CLI (the extension uses IndexedDB). <dir>/<key>.pmf is a verified
// package; <key>.part and <key>.part.etag an interrupted download;
// package-log-trust.json the log key and head recorded per provider;
// kept-requests/<account>/ the spam and topic requests kept while their
// answer is on the way (KeptDirectory); flood-ledger the device's flooding
// budget spent so far (FileFloodStore).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { PackageStorage } from '../core/download.js';
import type { BlindKeys } from '../core/blocklist.js';
import {
  KEPT_FOR_MS,
  type KeptRequests,
  type KeptSpamRequest,
  type KeptStore,
  type KeptTopicRequest,
  type KeptTopicRequests,
} from '../core/kept-requests.js';
import type { FloodLedgerStore } from '../core/flood-ledger.js';
import type { LegacyTrust, LogTrust, TrustStore } from '../core/package-log.js';

export class DirectoryStorage implements PackageStorage {
  constructor(private readonly dir: string) {
    fs.mkdirSync(dir, { recursive: true });
  }

  private file(key: string, ext: string): string {
    if (!/^[A-Za-z0-9._-]{1,80}$/.test(key)) throw new Error(`bad package key ${key}`);
    return path.join(this.dir, `${key}${ext}`);
  }

  async get(key: string): Promise<Uint8Array | undefined> {
    const f = this.file(key, '.pmf');
    return fs.existsSync(f) ? new Uint8Array(fs.readFileSync(f)) : undefined;
  }

  async getPartial(key: string): Promise<{ etag: string; bytes: Uint8Array } | undefined> {
    const f = this.file(key, '.part');
    if (!fs.existsSync(f) || !fs.existsSync(`${f}.etag`)) return undefined;
    return { etag: fs.readFileSync(`${f}.etag`, 'utf8'), bytes: new Uint8Array(fs.readFileSync(f)) };
  }

  async appendPartial(key: string, etag: string, chunk: Uint8Array): Promise<void> {
    const f = this.file(key, '.part');
    const tag = `${f}.etag`;
    if (!fs.existsSync(tag) || fs.readFileSync(tag, 'utf8') !== etag) {
      fs.writeFileSync(f, new Uint8Array(0));
      fs.writeFileSync(tag, etag);
    }
    fs.appendFileSync(f, chunk);
  }

  async dropPartial(key: string): Promise<void> {
    const f = this.file(key, '.part');
    fs.rmSync(f, { force: true });
    fs.rmSync(`${f}.etag`, { force: true });
  }

  async put(key: string, data: Uint8Array): Promise<void> {
    const f = this.file(key, '.pmf');
    fs.writeFileSync(`${f}.tmp`, data);
    fs.renameSync(`${f}.tmp`, f);
    await this.dropPartial(key);
  }
}

/** The flooding ledger's sum (client/core/flood-ledger.ts), one decimal integer, replaced atomically and synced. */
export class FileFloodStore implements FloodLedgerStore {
  private readonly file: string;

  constructor(dir: string) {
    fs.mkdirSync(dir, { recursive: true });
    this.file = path.join(dir, 'flood-ledger');
  }

  async load(): Promise<bigint | undefined> {
    if (!fs.existsSync(this.file)) return undefined;
    const text = fs.readFileSync(this.file, 'utf8').trim();
    // A damaged file refuses every request rather than restart the count at 0.
    if (!/^\d{1,40}$/.test(text)) throw new Error(`${this.file} is damaged: it must hold one decimal number`);
    return BigInt(text);
  }

  async save(spent: bigint): Promise<void> {
    const tmp = `${this.file}.tmp`;
    const fd = fs.openSync(tmp, 'w', 0o600);
    try {
      fs.writeSync(fd, `${spent}\n`);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, this.file);
  }
}

export class FileTrustStore implements TrustStore {
  private readonly file: string;

  constructor(dir: string) {
    fs.mkdirSync(dir, { recursive: true });
    this.file = path.join(dir, 'package-log-trust.json');
  }

  private all(): Record<string, LogTrust | LegacyTrust> {
    return fs.existsSync(this.file)
      ? (JSON.parse(fs.readFileSync(this.file, 'utf8')) as Record<string, LogTrust | LegacyTrust>)
      : {};
  }

  async get(origin: string): Promise<LogTrust | LegacyTrust | undefined> {
    return this.all()[origin];
  }

  async put(origin: string, trust: LogTrust): Promise<void> {
    // Write-then-rename: a crash never leaves a half-written file that loses the recorded heads.
    fs.writeFileSync(`${this.file}.tmp`, JSON.stringify({ ...this.all(), [origin]: trust }, null, 2));
    fs.renameSync(`${this.file}.tmp`, this.file);
  }
}

const sha256Hex = (s: string): string => createHash('sha256').update(s, 'utf8').digest('hex');
const b64 = (b: Uint8Array): string => Buffer.from(b).toString('base64');
const bytes = (s: unknown): Uint8Array | undefined =>
  typeof s === 'string' ? new Uint8Array(Buffer.from(s, 'base64')) : undefined;
/** Bytes from base64; a field of the wrong type is passed on as it is, for the journal's checks to refuse. */
const kept = (s: unknown): Uint8Array => bytes(s) ?? (s as Uint8Array);
const keptOptional = (s: unknown): Uint8Array | undefined => (s === undefined ? undefined : kept(s));
type Json = Record<string, unknown>;

/**
 * One account's kept requests (core/kept-requests.ts) and blocklist
 * kept blinds (core/blocklist.ts) under <cache>/kept-requests/<hash of
 * server and token>/, a file per message named by the hash of its id,
 * readable by the user alone (with the provider's answer they reveal that
 * message's verdict, or let it test guesses of its links). Written, then
 * renamed: a killed client leaves the old file or the new one, never half.
 */
export class KeptDirectory implements KeptRequests {
  private readonly dir: string;
  private readonly spam: KeptRequests;
  /** The topic requests, likewise. */
  readonly topics: KeptTopicRequests;
  /** The blocklist's kept blinds, one record per message looked up and not yet settled. */
  readonly blindKeys: BlindKeys;

  constructor(cache: string, server: string, token: string) {
    this.dir = path.join(cache, 'kept-requests', sha256Hex(`${server}\n${token}`).slice(0, 32));
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    // Those of messages never checked again, past the time a resend could be answered.
    const before = Date.now() - KEPT_FOR_MS;
    for (const f of fs.readdirSync(this.dir))
      if (fs.statSync(path.join(this.dir, f)).mtimeMs < before) fs.rmSync(path.join(this.dir, f), { force: true });
    this.spam = this.jsonFiles<KeptSpamRequest>(
      '.json',
      ({ request, evaluation, answer }) => ({
        messageId: request.messageId,
        lwe: b64(request.lwe),
        choices: b64(request.choices),
        T: evaluation.T,
        labels: b64(evaluation.labels),
        answer: answer && b64(answer),
      }),
      (j) => ({
        request: { messageId: String(j.messageId), lwe: kept(j.lwe), choices: kept(j.choices) },
        evaluation: { T: Number(j.T), labels: kept(j.labels) },
        answer: keptOptional(j.answer),
      }),
    );
    this.topics = this.jsonFiles<KeptTopicRequest>(
      '.topic.json',
      ({ request, evaluation, replay, localGuess, answer }) => ({
        messageId: request.messageId,
        lwes: b64(request.lwes),
        choices: b64(request.choices),
        T: evaluation.T,
        n: evaluation.n,
        K: evaluation.K,
        labels: b64(evaluation.labels),
        contentHash: replay.contentHash,
        localGuess,
        answer: answer && b64(answer),
      }),
      (j) => ({
        request: { messageId: String(j.messageId), lwes: kept(j.lwes), choices: kept(j.choices) },
        evaluation: { T: Number(j.T), n: Number(j.n), K: Number(j.K), labels: kept(j.labels) },
        replay: { messageId: String(j.messageId), contentHash: j.contentHash as string },
        localGuess: j.localGuess as string,
        answer: keptOptional(j.answer),
      }),
    );
    this.blindKeys = {
      get: async (messageId) => {
        const b = this.read(messageId, '.blind');
        return b && new Uint8Array(b);
      },
      put: async (messageId, key) => this.write(messageId, '.blind', key),
      delete: async (messageId) => fs.rmSync(this.file(messageId, '.blind'), { force: true }),
    };
  }

  get(messageId: string): Promise<KeptSpamRequest | undefined> {
    return this.spam.get(messageId);
  }

  put(messageId: string, request: KeptSpamRequest): Promise<void> {
    return this.spam.put(messageId, request);
  }

  delete(messageId: string): Promise<void> {
    return this.spam.delete(messageId);
  }

  /** Records of one kind as JSON files (bytes in base64); an unreadable file reads as one the journal refuses. */
  private jsonFiles<R>(ext: string, encode: (r: R) => Json, decode: (j: Json) => R): KeptStore<R> {
    return {
      get: async (messageId) => {
        const text = this.read(messageId, ext)?.toString('utf8');
        if (text === undefined) return undefined;
        let j: Json = {};
        try {
          j = JSON.parse(text) as Json;
        } catch {
          // Unreadable: decoded from nothing, a record that fails the journal's checks, which then drops it.
        }
        return decode(j);
      },
      put: async (messageId, r) => this.write(messageId, ext, JSON.stringify(encode(r))),
      delete: async (messageId) => fs.rmSync(this.file(messageId, ext), { force: true }),
    };
  }

  private file(messageId: string, ext: string): string {
    return path.join(this.dir, `${sha256Hex(messageId)}${ext}`);
  }

  private read(messageId: string, ext: string): Buffer | undefined {
    try {
      return fs.readFileSync(this.file(messageId, ext));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw e;
    }
  }

  private write(messageId: string, ext: string, data: string | Uint8Array): void {
    const f = this.file(messageId, ext);
    fs.writeFileSync(`${f}.tmp`, data, { mode: 0o600 });
    fs.renameSync(`${f}.tmp`, f);
  }
}
