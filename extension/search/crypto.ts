// Encryption at rest for the search index (WebCrypto, and @noble/hashes for
// the id tags, so the same code runs in extension pages, service workers and Node).
//
// The caller's key (or one derived from a passphrase with PBKDF2-SHA256) is a
// key-encryption key: it only wraps two random per-database keys, an AES-GCM
// data key and an HMAC-SHA256 key that turns message ids into opaque lookup
// tags. A wrong key therefore fails on one small record, with a clear error,
// before anything else is read.
import { hmac } from '@noble/hashes/hmac.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { t } from '../lib/i18n.js';
import { MailSearchError } from './errors.js';

/** OWASP's 2023 recommendation for PBKDF2-HMAC-SHA256. */
export const PBKDF2_ITERATIONS = 600_000;
/**
 * The iteration counts a stored header may name. The header is read before anything is
 * authenticated: a count far above ours would make every unlock hang, one below the floor
 * would be cheap to attack.
 */
export const MIN_PBKDF2_ITERATIONS = 100_000;
export const MAX_PBKDF2_ITERATIONS = 10 * PBKDF2_ITERATIONS;
const SALT_BYTES = 16;
const IV_BYTES = 12;
const KEY_BYTES = 32;

const utf8 = new TextEncoder();

/** Bytes backed by a plain ArrayBuffer (what WebCrypto and Blob accept). */
export type Bytes = Uint8Array<ArrayBuffer>;
const subtle = (): SubtleCrypto => globalThis.crypto.subtle;
/** HMAC-SHA256 with its key's padded blocks already hashed (noble keeps those states, not the key). */
type KeyedHmac = ReturnType<typeof hmac.create>;

/** An encrypted record as stored in IndexedDB. */
export interface SealedRecord {
  iv: Bytes;
  ct: ArrayBuffer;
}

export function randomSalt(): Bytes {
  return globalThis.crypto.getRandomValues(new Uint8Array(SALT_BYTES));
}

/**
 * The index's key-encryption key derived from the user's passphrase, as bytes: what a caller
 * may keep for the unlock period instead of the passphrase (OpenOptions.derivedKey).
 */
export async function derivePassphraseBits(passphrase: string, salt: Bytes, iterations: number): Promise<Bytes> {
  if (typeof passphrase !== 'string' || passphrase.length === 0) {
    throw new MailSearchError('bad-input', 'The search index passphrase must be a non-empty string');
  }
  const base = await subtle().importKey('raw', utf8.encode(passphrase), 'PBKDF2', false, ['deriveBits']);
  const bits = await subtle().deriveBits({ name: 'PBKDF2', hash: 'SHA-256', salt, iterations }, base, 8 * KEY_BYTES);
  return new Uint8Array(bits);
}

/** Key-encryption key bytes as a non-extractable AES-GCM key. */
export async function importKeyEncryptionKey(raw: Bytes): Promise<CryptoKey> {
  if (!(raw instanceof Uint8Array) || raw.length !== KEY_BYTES)
    throw new MailSearchError('bad-input', `A derived search index key is ${KEY_BYTES} bytes`);
  return subtle().importKey('raw', raw, 'AES-GCM', false, ['encrypt', 'decrypt']);
}

/** Derives the index's key-encryption key from the user's passphrase. */
export async function deriveKeyFromPassphrase(
  passphrase: string,
  salt: Bytes,
  iterations = PBKDF2_ITERATIONS,
): Promise<CryptoKey> {
  const raw = await derivePassphraseBits(passphrase, salt, iterations);
  try {
    return await importKeyEncryptionKey(raw);
  } finally {
    raw.fill(0);
  }
}

function assertAesGcmKey(key: CryptoKey): void {
  const ok =
    typeof CryptoKey !== 'undefined' &&
    key instanceof CryptoKey &&
    key.algorithm.name === 'AES-GCM' &&
    key.usages.includes('encrypt') &&
    key.usages.includes('decrypt');
  if (!ok) {
    throw new MailSearchError(
      'bad-input',
      'The search index key must be an AES-GCM CryptoKey usable for encrypt and decrypt',
    );
  }
}

function isSealedRecord(x: unknown): x is SealedRecord {
  const r = x as SealedRecord | null;
  return (
    typeof r === 'object' &&
    r !== null &&
    r.iv instanceof Uint8Array &&
    r.iv.length === IV_BYTES &&
    r.ct instanceof ArrayBuffer
  );
}

async function gcmSeal(key: CryptoKey, aad: string, plaintext: Bytes): Promise<SealedRecord> {
  const iv = globalThis.crypto.getRandomValues(new Uint8Array(IV_BYTES));
  const ct = await subtle().encrypt({ name: 'AES-GCM', iv, additionalData: utf8.encode(aad) }, key, plaintext);
  return { iv, ct };
}

/** Returns the plaintext, or undefined when the record does not authenticate. */
async function gcmOpen(key: CryptoKey, aad: string, rec: unknown): Promise<Bytes | undefined> {
  if (!isSealedRecord(rec)) return undefined;
  try {
    const pt = await subtle().decrypt({ name: 'AES-GCM', iv: rec.iv, additionalData: utf8.encode(aad) }, key, rec.ct);
    return new Uint8Array(pt);
  } catch {
    return undefined;
  }
}

/**
 * The AAD of the wrapped data keys. `binding` is the plaintext header they belong to
 * (store.ts headerBinding): any change to the header then fails the unwrap, even when the
 * caller brings an already derived key and never re-derives from the header. Format 1 bound
 * nothing (binding undefined), read only to migrate.
 */
const keysAad = (binding?: string): string =>
  binding === undefined ? 'pmf-search/v1|meta|keys' : `pmf-search/v2|meta|keys|${binding}`;

/** Encrypts and authenticates records; each record's storage address is its AAD. */
export class RecordCipher {
  private constructor(
    private readonly dataKey: CryptoKey,
    private readonly tagMac: KeyedHmac,
  ) {}

  /** Fresh random data keys for a new index, and their wrapped form (bound to the header) to store. */
  static async create(master: CryptoKey, binding: string): Promise<{ cipher: RecordCipher; wrapped: SealedRecord }> {
    assertAesGcmKey(master);
    const raw = globalThis.crypto.getRandomValues(new Uint8Array(2 * KEY_BYTES));
    try {
      const wrapped = await gcmSeal(master, keysAad(binding), raw);
      return { cipher: await RecordCipher.fromRaw(raw), wrapped };
    } finally {
      raw.fill(0);
    }
  }

  /**
   * Unwraps the stored data keys; a wrong master key, or a header that is not the one they
   * were bound to, is reported as such. With `rebind`, the keys are also wrapped again for
   * that header (the migration of a format 1 index).
   */
  static async unwrap(
    master: CryptoKey,
    wrapped: unknown,
    binding: string | undefined,
    rebind?: string,
  ): Promise<{ cipher: RecordCipher; rewrapped?: SealedRecord }> {
    assertAesGcmKey(master);
    const raw = await gcmOpen(master, keysAad(binding), wrapped);
    if (!raw || raw.length !== 2 * KEY_BYTES) {
      throw new MailSearchError('wrong-key', t('search_index_wrong_key'));
    }
    try {
      const rewrapped = rebind === undefined ? undefined : await gcmSeal(master, keysAad(rebind), raw);
      return { cipher: await RecordCipher.fromRaw(raw), rewrapped };
    } finally {
      raw.fill(0);
    }
  }

  private static async fromRaw(raw: Bytes): Promise<RecordCipher> {
    const dataKey = await subtle().importKey('raw', raw.slice(0, KEY_BYTES), 'AES-GCM', false, ['encrypt', 'decrypt']);
    return new RecordCipher(dataKey, hmac.create(sha256, raw.subarray(KEY_BYTES)));
  }

  seal(aad: string, plaintext: Bytes): Promise<SealedRecord> {
    return gcmSeal(this.dataKey, aad, plaintext);
  }

  /** Decrypts a record or throws an integrity error naming only its address. */
  async open(aad: string, rec: unknown): Promise<Bytes> {
    const pt = await gcmOpen(this.dataKey, aad, rec);
    if (!pt) {
      throw new MailSearchError('integrity', t('search_record_failed_auth', aad));
    }
    return pt;
  }

  sealJson(aad: string, value: unknown): Promise<SealedRecord> {
    return this.seal(aad, utf8.encode(JSON.stringify(value)));
  }

  async sealBytes(aad: string, bytes: Bytes, compress = false): Promise<SealedRecord> {
    return this.seal(aad, compress ? await gzip(bytes) : bytes);
  }

  /** Decrypts (and gunzips) a record holding bytes. */
  async openBytes(aad: string, rec: unknown, compressed = false): Promise<Bytes> {
    const pt = await this.open(aad, rec);
    if (!compressed) return pt;
    try {
      return await gunzip(pt);
    } catch {
      throw new MailSearchError('integrity', t('search_record_malformed', aad));
    }
  }

  async openJson<T>(aad: string, rec: unknown): Promise<T> {
    const pt = await this.open(aad, rec);
    try {
      return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(pt)) as T;
    } catch {
      throw new MailSearchError('integrity', t('search_record_malformed', aad));
    }
  }

  /**
   * Opaque, deterministic lookup tag for a message id (128-bit HMAC-SHA256,
   * base64url). Computed here, not by WebCrypto: a WebCrypto call per
   * message (10–40 µs of round trip and main-thread work) cost several
   * times the ~4 µs of hashing a short id from the keyed states.
   */
  tag(id: string): string {
    const mac = this.tagMac.clone().update(utf8.encode(id)).digest();
    let s = '';
    for (const b of mac.subarray(0, 16)) s += String.fromCharCode(b);
    return btoa(s).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
  }
}

async function pipeBytes(bytes: Bytes, stream: CompressionStream | DecompressionStream): Promise<Bytes> {
  const out = new Blob([bytes]).stream().pipeThrough(stream);
  return new Uint8Array(await new Response(out).arrayBuffer());
}

/** Index shards are gzip-compressed before encryption. */
export const gzip = (bytes: Bytes): Promise<Bytes> => pipeBytes(bytes, new CompressionStream('gzip'));
export const gunzip = (bytes: Bytes): Promise<Bytes> => pipeBytes(bytes, new DecompressionStream('gzip'));
