// IndexedDB layout of the search index (through idb). Every value except the
// header is AES-GCM encrypted (see crypto.ts); record addresses are the AAD.
//
//   meta    'header'   plaintext {format, kdf}: how to get the key (salt is not secret)
//           'keys'     wrapped data keys (AAD pmf-search/v2|meta|keys|<header>: bound to it;
//                      format 1 used pmf-search/v1|meta|keys and is migrated at open)
//           'manifest' shard list, tombstones, sealed boundary (AAD meta|manifest)
//   docs    key seq    {h, c}: one message; h = HMAC(id) for lookups by id, c = the key of
//                      the chunk holding it; index 'h' (unique). Stores of version 1 also
//                      hold {h, iv, ct}: the message itself (AAD doc|<seq>|<h>), still read
//   chunks  key seq    up to CHUNK_DOCS messages from this seq on (doc-chunks.ts), AAD chunk|<seq>
//   shards  key id     one sealed shard, compact form (compact-shard.ts) gzip'd (AAD shard|<id>)
import { openDB, type DBSchema, type IDBPDatabase, type IDBPTransaction, type StoreNames } from 'idb';
import type { Bytes, SealedRecord } from './crypto.js';
import { MailSearchError } from './errors.js';

/**
 * The header's format: how the key is derived and records are sealed (unchanged by DB_VERSION 2).
 * 2 binds the header into the wrapped keys' AAD; a format 1 index is rewritten as 2 when opened.
 */
export const FORMAT = 2;
/** IndexedDB schema version: 2 added the chunks store. */
const DB_VERSION = 2;

export interface Header {
  format: number;
  /** PBKDF2 parameters when the key comes from a passphrase; null for a caller key. */
  kdf: { name: 'PBKDF2-SHA256'; salt: Bytes; iterations: number } | null;
}

/** A message's row: where its chunk is, or (stores of version 1) the message itself. */
export type DocRecord = { h: string; c: number } | (SealedRecord & { h: string });

export interface SearchSchema extends DBSchema {
  meta: { key: string; value: Header | SealedRecord };
  docs: { key: number; value: DocRecord; indexes: { h: string } };
  shards: { key: number; value: SealedRecord };
  chunks: { key: number; value: SealedRecord };
}

export type SearchDb = IDBPDatabase<SearchSchema>;

/** The header as the wrapped keys' AAD binds it: every field, in a fixed order. */
export function headerBinding(h: Header): string {
  const kdf =
    h.kdf &&
    `${h.kdf.name}|${Array.from(h.kdf.salt, (b) => b.toString(16).padStart(2, '0')).join('')}|${h.kdf.iterations}`;
  return `format=${h.format}|kdf=${kdf ?? 'none'}`;
}
type Store = StoreNames<SearchSchema>;

export const docAad = (seq: number, h: string): string => `doc|${seq}|${h}`;
export const shardAad = (id: number): string => `shard|${id}`;
export const chunkAad = (seq: number): string => `chunk|${seq}`;
export const MANIFEST_AAD = 'meta|manifest';

export async function openStore(name: string): Promise<SearchDb> {
  if (typeof indexedDB === 'undefined') throw new MailSearchError('storage', 'IndexedDB is not available here');
  try {
    return await openDB<SearchSchema>(name, DB_VERSION, {
      upgrade(db, oldVersion) {
        if (oldVersion < 1) {
          db.createObjectStore('meta');
          db.createObjectStore('docs').createIndex('h', 'h', { unique: true });
          db.createObjectStore('shards');
        }
        db.createObjectStore('chunks');
      },
    });
  } catch (err) {
    throw storageError(err);
  }
}

function storageError(err: unknown): MailSearchError {
  if (err instanceof MailSearchError) return err;
  const name = (err as { name?: string } | null)?.name ?? 'Error';
  if (name === 'QuotaExceededError') {
    return new MailSearchError(
      'quota',
      'Not enough storage space to update the search index; nothing was changed. Free disk space, then index again.',
    );
  }
  return new MailSearchError('storage', `The search index could not be written (${name}); nothing was changed`);
}

/** One write of an atomic operation. */
export type WriteOp =
  | { store: 'meta'; put: Header | SealedRecord; key: string }
  | { store: 'docs'; put: DocRecord; key: number }
  | { store: 'shards' | 'chunks'; put: SealedRecord; key: number }
  | { store: Store; delete: number | string };

/**
 * Applies the writes in one readwrite transaction and resolves once it has
 * committed. Any failure, including a quota error at commit, aborts the whole
 * transaction, so the stored state is either entirely old or entirely new.
 */
export async function writeAtomically(db: SearchDb, ops: WriteOp[]): Promise<void> {
  const failed = await commit(db, ops);
  if (failed !== undefined) throw storageError(failed);
}

/**
 * Like writeAtomically, but resolves false, having written nothing, when a
 * row would share its id tag with a stored one (the unique index 'h'): a
 * message written is then already stored. Adds need no lookup of their tags
 * first; only a replacement pays for one.
 */
export async function writeNew(db: SearchDb, ops: WriteOp[]): Promise<boolean> {
  const failed = await commit(db, ops);
  if ((failed as { name?: string } | undefined)?.name === 'ConstraintError') return false;
  if (failed !== undefined) throw storageError(failed);
  return true;
}

/**
 * Runs the writes in one transaction; resolves to what made it fail, or
 * undefined once committed. A failed write's own error comes first: its
 * transaction's done rejects at the error event, before the abort that sets
 * tx.error, so Chromium often reports a bare AbortError there for what was a
 * ConstraintError (and a re-indexed message then failed its whole batch).
 */
async function commit(db: SearchDb, ops: WriteOp[]): Promise<unknown> {
  let tx: IDBPTransaction<SearchSchema, Store[], 'readwrite'>;
  try {
    tx = db.transaction([...new Set(ops.map((o) => o.store))], 'readwrite');
  } catch (err) {
    return err;
  }
  let failedWrite: unknown;
  try {
    for (const op of ops) {
      const store = tx.objectStore(op.store);
      const req = 'delete' in op ? store.delete(op.delete) : store.put(op.put as never, op.key as never);
      req.catch((err: unknown) => void (failedWrite ??= err));
    }
  } catch (err) {
    try {
      tx.abort();
    } catch {
      // already aborted
    }
    await tx.done.catch(() => undefined);
    return err;
  }
  try {
    await tx.done;
    return undefined;
  } catch (err) {
    return failedWrite ?? tx.error ?? err;
  }
}

/** Encoded size of a stored encrypted record. */
export const recordBytes = (r: SealedRecord): number => r.iv.byteLength + r.ct.byteLength;
