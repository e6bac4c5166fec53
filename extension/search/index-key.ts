// The index's keys: the caller's key-encryption key (its own, one derived
// from a passphrase with PBKDF2, or that derived key kept from an earlier
// unlock) wraps the random data keys (crypto.ts RecordCipher). The plaintext
// header says how to derive; it is checked against fixed bounds before any
// work and bound into the wrapped keys' AAD, so a header that was changed on
// disk fails the unwrap like a wrong key.
import { t } from '../lib/i18n.js';
import {
  derivePassphraseBits,
  importKeyEncryptionKey,
  MAX_PBKDF2_ITERATIONS,
  MIN_PBKDF2_ITERATIONS,
  PBKDF2_ITERATIONS,
  randomSalt,
  RecordCipher,
  type Bytes,
  type SealedRecord,
} from './crypto.js';
import { MailSearchError } from './errors.js';
import { FORMAT, headerBinding, type Header } from './store.js';

export interface KeySource {
  /** AES-GCM key (encrypt+decrypt) protecting the index. */
  key?: CryptoKey;
  /** Passphrase from which the key is derived (PBKDF2-SHA256, stored salt). */
  passphrase?: string;
  /** The key a passphrase derived for this index (given to onDerivedKey earlier): opens it without PBKDF2. */
  derivedKey?: Bytes;
  /** Receives the key a passphrase derived, for a caller that keeps it instead of the passphrase. */
  onDerivedKey?: (raw: Bytes) => void;
}

const SALT_BYTES = 16;

export function checkKeySource(opts: KeySource): void {
  const given = [opts.key, opts.passphrase, opts.derivedKey].filter((x) => x !== undefined).length;
  if (given > 1)
    throw new MailSearchError('bad-input', 'Give one of a key, a passphrase or a derived key for the search index');
  if (given === 0) throw new MailSearchError('no-key', t('search_index_no_key'));
}

/** A new index's header, wrapped keys and cipher. */
export async function newIndexKeys(
  opts: KeySource,
): Promise<{ header: Header; wrapped: SealedRecord; cipher: RecordCipher }> {
  const kdf = opts.key ? null : { name: 'PBKDF2-SHA256' as const, salt: randomSalt(), iterations: PBKDF2_ITERATIONS };
  const header: Header = { format: FORMAT, kdf };
  const master = await keyEncryptionKey(header, opts);
  return { header, ...(await RecordCipher.create(master, headerBinding(header))) };
}

/**
 * The cipher of an existing index. A format 1 index comes back with the header and wrapped keys
 * of format 2 (`migrated`), for the caller to write in one transaction.
 */
export async function openIndexKeys(
  header: Header,
  wrapped: unknown,
  opts: KeySource,
): Promise<{ cipher: RecordCipher; migrated?: { header: Header; wrapped: SealedRecord } }> {
  checkHeader(header);
  const master = await keyEncryptionKey(header, opts);
  if (header.format === FORMAT) return RecordCipher.unwrap(master, wrapped, headerBinding(header));
  const next: Header = { format: FORMAT, kdf: header.kdf };
  const { cipher, rewrapped } = await RecordCipher.unwrap(master, wrapped, undefined, headerBinding(next));
  return { cipher, migrated: { header: next, wrapped: rewrapped! } };
}

function checkHeader(header: Header): void {
  if (header.format !== FORMAT && header.format !== 1) {
    throw new MailSearchError('integrity', t('search_index_format_unsupported', String(header.format)));
  }
  const kdf = header.kdf;
  if (kdf === null) return;
  const ok =
    kdf?.name === 'PBKDF2-SHA256' &&
    kdf.salt instanceof Uint8Array &&
    kdf.salt.length === SALT_BYTES &&
    Number.isInteger(kdf.iterations) &&
    kdf.iterations >= MIN_PBKDF2_ITERATIONS &&
    kdf.iterations <= MAX_PBKDF2_ITERATIONS;
  if (!ok) throw new MailSearchError('integrity', t('search_index_header_damaged'));
}

async function keyEncryptionKey(header: Header, opts: KeySource): Promise<CryptoKey> {
  if (!header.kdf) {
    if (!opts.key) throw new MailSearchError('bad-input', 'This search index is protected by a key, not a passphrase');
    return opts.key;
  }
  if (opts.derivedKey) return importKeyEncryptionKey(opts.derivedKey);
  if (opts.passphrase === undefined)
    throw new MailSearchError('bad-input', 'This search index is protected by a passphrase, not a key');
  const raw = await derivePassphraseBits(opts.passphrase, header.kdf.salt, header.kdf.iterations);
  try {
    opts.onDerivedKey?.(raw.slice());
    return await importKeyEncryptionKey(raw);
  } finally {
    raw.fill(0);
  }
}
