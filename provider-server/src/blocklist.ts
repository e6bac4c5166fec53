// The provider's private blocklists (docs/blocklist.md): the OPRF key of each
// list (generated on first publish, file mode 0600, never logged), published
// versions (a full package per version and a delta from the one before) and
// the evaluation of clients' blinded elements.
// Layout: <dataDir>/blocklists/<id>/{key, versions.json, v<k>.pmfbl, v<k>.delta}.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  ELEMENT_BYTES,
  encodeDelta,
  encodeList,
  evaluate,
  logIdOf,
  makeEntry,
  oprf,
  openList,
  type BlockList,
  type BlockRecord,
} from '../../protocol/blocklist.js';
import { ProtocolError } from '../../protocol/errors.js';
import type { LogEntry } from '../../protocol/package-log.js';
import { itemOf, type ItemKind } from '../../mail/blocklist-items.js';
import { providerSodiumReady } from './native-sodium.js';
import { checkElement, mulBase } from '../../wasm/ts/ristretto.js';
import { readSecretFile, writeSecretFile } from './secret-file.js';

const DAY_MS = 86_400_000;
const ID = /^[A-Za-z0-9._-]{1,64}$/;
const KINDS: readonly ItemKind[] = ['host', 'domain', 'url', 'sha256'];

/** A published file: bytes never change, SHA-256 pinned (served like a model package). */
export interface ServedFile {
  file: string;
  sha256: string;
  bytes: number;
}

interface VersionRecord extends Omit<ServedFile, 'file'> {
  version: number;
  entries: number;
  createdAt: string;
  /** The delta from version - 1, when there is one. */
  delta?: Omit<ServedFile, 'file'>;
}

export interface ServedList {
  id: string;
  version: number;
  /** The list's OPRF key file (mode 0600); read only inside crypto workers. */
  keyFile: string;
  entries: number;
  createdAt: string;
  package: ServedFile;
  delta?: ServedFile & { from: number };
}

/**
 * Reads a list source: one entry per line, tab-separated
 * `kind value category score since` (kind host|domain|url|sha256, score
 * 0..100, since YYYY-MM-DD); blank lines and lines starting with # are skipped.
 */
export function parseListSource(text: string): {
  categories: string[];
  items: { item: string; record: BlockRecord }[];
} {
  const rows: { item: string; category: string; score: number; sinceDay: number }[] = [];
  text.split('\n').forEach((line, i) => {
    const t = line.trim();
    if (t === '' || t.startsWith('#')) return;
    const bad = (why: string): never => {
      throw new Error(`blocklist source line ${i + 1}: ${why}`);
    };
    const [kind, value, category, score, since, ...rest] = t.split('\t');
    if (rest.length > 0 || since === undefined) bad('expected 5 tab-separated fields: kind value category score since');
    if (!KINDS.includes(kind as ItemKind)) bad(`kind must be one of ${KINDS.join(', ')}`);
    const item = itemOf(kind as ItemKind, value) ?? bad(`${kind} ${JSON.stringify(value)} is not valid`);
    if (!/^[A-Za-z0-9 _.-]{1,64}$/.test(category)) bad('category must be 1..64 letters, digits, spaces, _ . -');
    const s = Number(score);
    if (!/^\d{1,3}$/.test(score) || s > 100) bad('score must be an integer 0..100');
    const day = Date.parse(`${since}T00:00:00Z`) / DAY_MS;
    if (!/^\d{4}-\d{2}-\d{2}$/.test(since) || !Number.isInteger(day) || day < 0 || day > 0xffff)
      bad('since must be a date YYYY-MM-DD between 1970 and 2149');
    rows.push({ item, category, score: s, sinceDay: day });
  });
  const categories = [...new Set(rows.map((r) => r.category))].sort();
  if (categories.length > 256) throw new Error('blocklist source: at most 256 categories');
  const byItem = new Map<string, { item: string; record: BlockRecord }>();
  for (const r of rows) {
    // The same item twice: the last line wins (a list file read top to bottom).
    byItem.set(r.item, {
      item: r.item,
      record: { category: categories.indexOf(r.category), score: r.score, sinceDay: r.sinceDay },
    });
  }
  return { categories, items: [...byItem.values()] };
}

/** Throws a bad_field ProtocolError unless `blinded` holds canonical, non-identity ristretto255 elements. */
export function checkElements(blinded: Uint8Array): void {
  if (blinded.length % ELEMENT_BYTES !== 0) {
    throw new ProtocolError(
      'bad_field',
      `blocklist_request.blinded is not a whole number of ${ELEMENT_BYTES}-byte elements`,
    );
  }
  for (let i = 0; i < blinded.length; i += ELEMENT_BYTES) {
    const c = checkElement(blinded.subarray(i, i + ELEMENT_BYTES));
    if (c === 'invalid') {
      throw new ProtocolError(
        'bad_field',
        `blocklist_request.blinded element ${i / ELEMENT_BYTES} is not a canonical ristretto255 element`,
      );
    }
    if (c === 'identity')
      throw new ProtocolError('bad_field', `blocklist_request.blinded element ${i / ELEMENT_BYTES} is the identity`);
  }
}

export class BlocklistCatalog {
  private constructor(
    private readonly dir: string,
    private readonly lists: Map<string, VersionRecord[]>,
  ) {}

  /** Opens every list published under dataDir (none is fine). */
  static open(dataDir: string): BlocklistCatalog {
    const dir = path.join(dataDir, 'blocklists');
    const lists = new Map<string, VersionRecord[]>();
    if (fs.existsSync(dir)) {
      for (const id of fs.readdirSync(dir).sort()) {
        if (!ID.test(id)) continue;
        const versions = readVersions(path.join(dir, id));
        if (versions.length === 0) continue;
        readOprfKey(path.join(dir, id, 'key')); // refuse a missing, open or malformed key at start, not per request
        lists.set(id, versions);
      }
    }
    return new BlocklistCatalog(dir, lists);
  }

  /**
   * Imports a list source and publishes it as the next version (with a delta
   * from the current one), unless it holds exactly the current entries.
   * Returns the current version either way. Readies libsodium first (the
   * entries are OPRF outputs, one multiplication each: native when built).
   */
  static async publish(
    dataDir: string,
    id: string,
    source: string,
    now = new Date(),
  ): Promise<{ version: number; entries: number; published: boolean }> {
    await providerSodiumReady();
    if (!ID.test(id)) throw new Error('blocklist id must match [A-Za-z0-9._-]{1,64}');
    const dir = path.join(dataDir, 'blocklists', id);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const keyFile = path.join(dir, 'key');
    if (!fs.existsSync(keyFile)) writeSecretFile(keyFile, oprf.generateKeyPair().secretKey);
    const key = readOprfKey(keyFile);
    const { categories, items } = parseListSource(source);
    const encoder = new TextEncoder();
    const entries = items.map((x) => makeEntry(evaluate(key, encoder.encode(x.item)), x.record));
    const versions = readVersions(dir);
    const last = versions.at(-1);
    const version = (last?.version ?? 0) + 1;
    const publicKey = Buffer.from(mulBase(key)).toString('hex');
    const data = encodeList({ listId: id, version, categories, publicKey, createdAt: now.toISOString() }, entries);
    const next = openList(data);
    const prev = last && openList(fs.readFileSync(path.join(dir, `v${last.version}.pmfbl`)));
    if (prev && sameContent(prev, next)) return { version: last.version, entries: last.entries, published: false };
    const record: VersionRecord = {
      version,
      entries: entries.length,
      createdAt: next.header.createdAt,
      ...fileFacts(data),
    };
    fs.writeFileSync(path.join(dir, `v${version}.pmfbl`), data);
    if (prev) {
      const delta = encodeDelta(prev, next);
      fs.writeFileSync(path.join(dir, `v${version}.delta`), delta);
      record.delta = fileFacts(delta);
    }
    fs.writeFileSync(path.join(dir, 'versions.json'), JSON.stringify([...versions, record], null, 1));
    return { version, entries: entries.length, published: true };
  }

  /** The current version of every list. */
  all(): ServedList[] {
    return [...this.lists.keys()].map((id) => this.current(id)!);
  }

  current(id: string): ServedList | undefined {
    const v = this.lists.get(id)?.at(-1);
    return v && this.served(id, v);
  }

  /** A published version (old versions stay downloadable, like model packages). */
  version(id: string, version: number): ServedList | undefined {
    const v = this.lists.get(id)?.find((x) => x.version === version);
    return v && this.served(id, v);
  }

  /** Every published version, for the package log. */
  published(): LogEntry[] {
    return [...this.lists].flatMap(([id, versions]) =>
      versions.map((v) => ({
        modelId: logIdOf(id),
        version: v.version,
        packageSha256: v.sha256,
        createdAt: v.createdAt,
      })),
    );
  }

  private served(id: string, v: VersionRecord): ServedList {
    const base = path.join(this.dir, id);
    return {
      id,
      version: v.version,
      entries: v.entries,
      createdAt: v.createdAt,
      keyFile: path.join(base, 'key'),
      package: { file: path.join(base, `v${v.version}.pmfbl`), sha256: v.sha256, bytes: v.bytes },
      ...(v.delta && { delta: { file: path.join(base, `v${v.version}.delta`), from: v.version - 1, ...v.delta } }),
    };
  }
}

/** A list's OPRF key: a 32-byte ristretto255 scalar in a mode-0600 regular file. */
export function readOprfKey(file: string): Uint8Array {
  const key = readSecretFile(file);
  if (key.length !== 32) throw new Error(`${file} is not a 32-byte OPRF key`);
  return key;
}

/** k·B for each blinded element B, already checked by checkElements (worker side). */
export function evaluateElements(key: Uint8Array, blinded: Uint8Array): Uint8Array {
  return oprf.blindEvaluateAll(key, blinded);
}

/** evaluateElements with the list's key read from its file for this request; that copy is wiped after use. */
export function evaluateWithKeyFile(keyFile: string, blinded: Uint8Array): Uint8Array {
  const key = readOprfKey(keyFile);
  try {
    return evaluateElements(key, blinded);
  } finally {
    key.fill(0);
  }
}

function readVersions(dir: string): VersionRecord[] {
  const file = path.join(dir, 'versions.json');
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as VersionRecord[]) : [];
}

function fileFacts(data: Uint8Array): { sha256: string; bytes: number } {
  return { sha256: createHash('sha256').update(data).digest('hex'), bytes: data.length };
}

/** Same entries, categories and public key (a version from before the key was published is replaced). */
function sameContent(a: BlockList, b: BlockList): boolean {
  return (
    a.header.bodySha256 === b.header.bodySha256 &&
    a.header.categories.join('\n') === b.header.categories.join('\n') &&
    a.header.publicKey === b.header.publicKey
  );
}
