// Resumable, hash-verified download of a model package (docs/wire-formats.md#model-package).
// Transport is fetch (browsers and Node 20); storage is a small interface so
// the CLI keeps packages on disk (node-storage.ts) and the extension in
// IndexedDB. A partial download resumes with Range + If-Range (the strong
// ETag): if the server's version changed meanwhile, it sends the whole new
// package and the partial bytes are discarded. Nothing is used before the
// whole package's SHA-256 and the body's SHA-256 in its header both match,
// and (with logCheck) the provider's package log lists that exact package.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { openPackage, type PackageHeader } from '../../protocol/package.js';

/** Where packages live on the client; keys are "<modelId>-v<version>". */
export interface PackageStorage {
  /** A complete, verified package, if stored. */
  get(key: string): Promise<Uint8Array | undefined>;
  /** Bytes of an interrupted download and the ETag they belong to. */
  getPartial(key: string): Promise<{ etag: string; bytes: Uint8Array } | undefined>;
  appendPartial(key: string, etag: string, chunk: Uint8Array): Promise<void>;
  dropPartial(key: string): Promise<void>;
  /** Stores the verified package (and drops the partial). */
  put(key: string, data: Uint8Array): Promise<void>;
  /**
   * Runs `fn` alone among everything sharing this storage for `key`: where
   * several realms download into it at once (the extension's workers), their
   * chunks would interleave in one partial download.
   */
  exclusive?<T>(key: string, fn: () => Promise<T>): Promise<T>;
}

export interface ModelListing {
  id: string;
  version: number;
  sha256: string;
  bytes: number;
  url: string;
}

export interface DownloadOptions {
  /** The provider's HTTP base URL, e.g. https://mail.example.org */
  baseUrl: string;
  modelId: string;
  storage: PackageStorage;
  /** Expected SHA-256 (hex) of the whole package, e.g. from the welcome frame. Defaults to the listing's. */
  expectSha256?: string;
  onProgress?: (received: number, total: number) => void;
  fetch?: typeof fetch;
  /**
   * Runs on every verified package before it is returned (stored or just
   * downloaded) and throws to refuse it: PackageLogVerifier.checkPackage.
   */
  logCheck?: (pkg: VerifiedPackage) => Promise<unknown>;
}

export interface VerifiedPackage {
  header: PackageHeader;
  body: Uint8Array;
  sha256: string;
}

/** The latest version of a model as listed by the provider. */
export async function latestModel(
  baseUrl: string,
  modelId: string,
  fetchFn: typeof fetch = fetch,
): Promise<ModelListing> {
  const r = await fetchFn(new URL('/models', baseUrl));
  if (!r.ok) throw new Error(`model list: HTTP ${r.status}`);
  const list = (await r.json()) as { models?: ModelListing[] };
  const m = list.models?.find((x) => x.id === modelId);
  if (!m) throw new Error(`model ${modelId} is not offered by ${baseUrl}`);
  return m;
}

/** The package is not the one the provider vouched for (hash, header or body): never used. */
export class PackageIntegrityError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'PackageIntegrityError';
  }
}

function verify(data: Uint8Array, expectSha256: string, what: string): VerifiedPackage {
  const digest = bytesToHex(sha256(data));
  if (digest !== expectSha256)
    throw new PackageIntegrityError(`${what}: SHA-256 ${digest} does not match the expected ${expectSha256}`);
  try {
    const { header, body } = openPackage(data);
    return { header, body, sha256: digest };
  } catch (e) {
    throw new PackageIntegrityError(`${what}: ${(e as Error).message}`);
  }
}

/**
 * Returns the latest verified package, downloading (or resuming) it if it is
 * not stored yet. Throws on any mismatch; a corrupt download is discarded.
 * The log check runs after the package is stored, so a log the client cannot
 * fetch right now costs a retry, not the download.
 */
export async function ensurePackage(opts: DownloadOptions): Promise<VerifiedPackage> {
  const pkg = await fetchVerified(opts);
  await opts.logCheck?.(pkg);
  return pkg;
}

async function fetchVerified(opts: DownloadOptions): Promise<VerifiedPackage> {
  const listing = await latestModel(opts.baseUrl, opts.modelId, opts.fetch ?? fetch);
  const expect = opts.expectSha256 ?? listing.sha256;
  let pkg: VerifiedPackage | undefined;
  const file = { key: `${listing.id}-v${listing.version}`, url: listing.url, sha256: expect, bytes: listing.bytes };
  await fetchPinned(opts, file, 'model package', (data, what) => {
    pkg = verify(data, expect, what);
  });
  return pkg!;
}

/** A file whose SHA-256 is known before it is fetched, and where the client keeps it. */
export interface PinnedFile {
  /** Storage key. */
  key: string;
  /** Path on the provider. */
  url: string;
  sha256: string;
  bytes: number;
}

/**
 * Returns a pinned file from storage or downloads (or resumes) it. `check`
 * runs on the bytes before they are stored or returned and throws to refuse
 * them (a refused download is discarded, never stored).
 */
export async function fetchPinned(
  opts: Pick<DownloadOptions, 'baseUrl' | 'storage' | 'fetch' | 'onProgress'>,
  file: PinnedFile,
  what: string,
  check: (data: Uint8Array, what: string) => void,
): Promise<Uint8Array> {
  const run = () => fetchPinnedAlone(opts, file, what, check);
  return opts.storage.exclusive ? opts.storage.exclusive(file.key, run) : run();
}

async function fetchPinnedAlone(
  opts: Pick<DownloadOptions, 'baseUrl' | 'storage' | 'fetch' | 'onProgress'>,
  file: PinnedFile,
  what: string,
  check: (data: Uint8Array, what: string) => void,
): Promise<Uint8Array> {
  const fetchFn = opts.fetch ?? fetch;
  const { key } = file;
  const stored = await opts.storage.get(key);
  if (stored) {
    check(stored, `stored ${what} ${key}`);
    return stored;
  }
  const partial = await opts.storage.getPartial(key);
  const headers: Record<string, string> = {};
  if (partial && partial.bytes.length > 0) {
    headers.range = `bytes=${partial.bytes.length}-`;
    headers['if-range'] = partial.etag;
  }
  const r = await fetchFn(new URL(file.url, opts.baseUrl), { headers });
  if (r.status === 416 && partial) {
    // The partial is already whole (or bogus): verify what we have, start over if bad.
    await r.body?.cancel();
    return finish(opts.storage, key, partial.bytes, `${what} ${key}`, check);
  }
  if (r.status !== 200 && r.status !== 206) throw new Error(`${what} ${key}: HTTP ${r.status}`);
  const etag = r.headers.get('etag') ?? '';
  if (!/^"[0-9a-f]{64}"$/.test(etag)) throw new Error(`${what} ${key}: the server sent no strong ETag`);
  let received = 0;
  if (r.status === 206 && partial) {
    received = partial.bytes.length;
  } else {
    await opts.storage.dropPartial(key);
  }
  const total = file.bytes;
  opts.onProgress?.(received, total);
  if (!r.body) throw new Error(`${what} ${key}: empty response`);
  const reader = r.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    received += value.length;
    if (received > total) throw new Error(`${what} ${key}: more bytes than the listed ${total}`);
    await opts.storage.appendPartial(key, etag, value);
    opts.onProgress?.(received, total);
  }
  const all = await opts.storage.getPartial(key);
  return finish(opts.storage, key, all?.bytes ?? new Uint8Array(0), `${what} ${key}`, check);
}

async function finish(
  storage: PackageStorage,
  key: string,
  data: Uint8Array,
  what: string,
  check: (data: Uint8Array, what: string) => void,
): Promise<Uint8Array> {
  try {
    check(data, what);
  } catch (e) {
    await storage.dropPartial(key);
    throw e;
  }
  await storage.put(key, data);
  return data;
}
