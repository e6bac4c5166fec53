// PackageStorage and the package log's TrustStore on the local file system,
// for the CLI (the extension uses IndexedDB). <dir>/<key>.pmf is a verified
// package; <key>.part and <key>.part.etag an interrupted download;
// package-log-trust.json the log key and head recorded per provider.
import fs from 'node:fs';
import path from 'node:path';
import type { PackageStorage } from '../core/download.js';
import type { LogTrust, TrustStore } from '../core/package-log.js';

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

export class FileTrustStore implements TrustStore {
  private readonly file: string;

  constructor(dir: string) {
    fs.mkdirSync(dir, { recursive: true });
    this.file = path.join(dir, 'package-log-trust.json');
  }

  private all(): Record<string, LogTrust> {
    return fs.existsSync(this.file) ? (JSON.parse(fs.readFileSync(this.file, 'utf8')) as Record<string, LogTrust>) : {};
  }

  async get(origin: string): Promise<LogTrust | undefined> {
    return this.all()[origin];
  }

  async put(origin: string, trust: LogTrust): Promise<void> {
    // Write-then-rename: a crash never leaves a half-written file that loses the recorded heads.
    fs.writeFileSync(`${this.file}.tmp`, JSON.stringify({ ...this.all(), [origin]: trust }, null, 2));
    fs.renameSync(`${this.file}.tmp`, this.file);
  }
}
