// OpenPGP keys at rest in IndexedDB. Private keys are stored only in their
// passphrase-encrypted armored form, protected with Argon2id and AEAD
// (RFC 9580 S2K usage 253) whatever protection they came with; an
// unencrypted private key offered for import is encrypted with the passphrase
// given, which must be hard to guess (passphrase-strength.ts). A key imported
// again is merged into the stored copy (OpenPGP.js key.update), never
// replaces it: what was certified or revoked before stays. Every write is one
// IndexedDB transaction, so a failure (quota, abort) leaves the previous
// state intact.
import { openDB, type IDBPDatabase } from 'idb';
import * as openpgp from 'openpgp';
import { keyIdentity } from '../../mail/signer.js';
import { KeyError, describeStorageError } from './errors.js';
import { passphraseStrength } from './passphrase-strength.js';
import { t } from './i18n.js';

export interface KeyInfo {
  fingerprint: string;
  /** Key IDs (hex) of the primary key and all subkeys, for recipient matching. */
  keyIds: string[];
  /** The user IDs the key's owner certified, primary first (unsigned or revoked ones are left out). */
  userIds: string[];
  hasPrivate: boolean;
  algorithm: string;
  created: string;
}

interface KeyRecord extends KeyInfo {
  armoredPublic: string;
  /** Passphrase-encrypted; absent for contacts' public keys. */
  armoredPrivate?: string;
}

export type Progress = (fraction: number, label: string) => void;

const STORE = 'keys';
/** Armored keys larger than this are rejected before parsing. */
export const MAX_KEY_ARMOR_BYTES = 1 << 20;
/**
 * How private keys are protected at rest: Argon2id (OpenPGP.js's default parameters: 3 passes,
 * 4 lanes, 64 MiB) instead of iterated SHA-256, and AES-256 in AEAD mode (OCB) instead of CFB
 * with a SHA-1 checksum, so a stolen key file costs memory-hard work per guess.
 */
export const PROTECTION: openpgp.PartialConfig = { s2kType: openpgp.enums.s2k.argon2, aeadProtect: true };

export class KeyStore {
  private constructor(private readonly db: IDBPDatabase) {}

  static async open(dbName = 'pmf-keys'): Promise<KeyStore> {
    const db = await openDB(dbName, 1, {
      upgrade(d) {
        d.createObjectStore(STORE, { keyPath: 'fingerprint' });
      },
    });
    return new KeyStore(db);
  }

  close(): void {
    this.db.close();
  }

  async list(): Promise<KeyInfo[]> {
    const records = (await this.db.getAll(STORE)) as KeyRecord[];
    return records.map(toInfo).sort((a, b) => a.created.localeCompare(b.created));
  }

  /**
   * Imports every key in an armored block. A private key must come with the
   * passphrase that unlocks it (or, if it is not encrypted, the passphrase to
   * protect it with); a wrong passphrase stores nothing.
   */
  async importArmored(armored: string, passphrase?: string): Promise<KeyInfo[]> {
    if (armored.length > MAX_KEY_ARMOR_BYTES) throw new KeyError('too-large', t('key_too_large'));
    let keys: openpgp.Key[];
    try {
      keys = await openpgp.readKeys({ armoredKeys: armored.trim() });
    } catch {
      throw new KeyError('malformed', t('key_malformed'));
    }
    const records = new Map<string, KeyRecord>();
    for (const key of keys) {
      const fingerprint = key.getFingerprint().toUpperCase();
      const stored = records.get(fingerprint) ?? (await this.find(fingerprint));
      const record = key.isPrivate() ? await privateRecord(key, passphrase, stored) : await publicRecord(key, stored);
      records.set(fingerprint, record);
    }
    await this.putAll([...records.values()]);
    return [...records.values()].map(toInfo);
  }

  /** Generates a Curve25519 key pair protected by passphrase. */
  async generate(
    opts: { name: string; email: string; passphrase: string },
    onProgress: Progress = () => {},
  ): Promise<KeyInfo> {
    requireStrong(opts.passphrase);
    if (!/^[^\s@<>]+@[^\s@<>]+$/.test(opts.email)) throw new KeyError('bad-input', t('key_bad_email'));
    onProgress(0.1, t('key_generating'));
    const { privateKey } = await openpgp.generateKey({
      type: 'ecc',
      curve: 'curve25519Legacy',
      userIDs: [{ name: opts.name.trim() || undefined, email: opts.email }],
      format: 'object',
    });
    onProgress(0.4, t('key_protecting'));
    const record = await privateRecord(privateKey, opts.passphrase);
    onProgress(0.9, 'Saving…');
    await this.putAll([record]);
    onProgress(1, 'Done');
    return toInfo(record);
  }

  async exportPublic(fingerprint: string): Promise<string> {
    return (await this.get(fingerprint)).armoredPublic;
  }

  async delete(fingerprint: string): Promise<void> {
    await this.db.delete(STORE, fingerprint);
  }

  /** The stored private key, decrypted with passphrase (wrong → KeyError). */
  async unlock(fingerprint: string, passphrase: string): Promise<openpgp.PrivateKey> {
    const rec = await this.get(fingerprint);
    if (!rec.armoredPrivate) throw new KeyError('no-private', t('key_public_only'));
    const key = await openpgp.readPrivateKey({ armoredKey: rec.armoredPrivate });
    return decryptWith(key, passphrase);
  }

  /** Public keys of everyone (own keys and contacts), for signature checks. */
  async verificationKeys(): Promise<openpgp.PublicKey[]> {
    const records = (await this.db.getAll(STORE)) as KeyRecord[];
    return Promise.all(records.map((r) => openpgp.readKey({ armoredKey: r.armoredPublic })));
  }

  private async find(fingerprint: string): Promise<KeyRecord | undefined> {
    return (await this.db.get(STORE, fingerprint)) as KeyRecord | undefined;
  }

  private async get(fingerprint: string): Promise<KeyRecord> {
    const rec = await this.find(fingerprint);
    if (!rec) throw new KeyError('not-found', t('key_not_found', fingerprint));
    return rec;
  }

  private async putAll(records: KeyRecord[]): Promise<void> {
    const tx = this.db.transaction(STORE, 'readwrite');
    try {
      for (const rec of records) await tx.store.put(rec);
      await tx.done;
    } catch (e) {
      // All or nothing: roll back the records already put in this transaction.
      try {
        tx.abort();
      } catch {
        // Already aborted by the failure itself.
      }
      tx.done.catch(() => {});
      throw new KeyError('storage', describeStorageError(e, t('key_not_saved')));
    }
  }
}

function requirePassphrase(passphrase: string | undefined): asserts passphrase is string {
  if (!passphrase) throw new KeyError('bad-input', t('key_enter_passphrase'));
}

/** A passphrase the extension chooses protection with must be hard to guess. */
function requireStrong(passphrase: string | undefined): asserts passphrase is string {
  if (!passphrase) throw new KeyError('bad-input', t('key_choose_passphrase'));
  const { strong, advice } = passphraseStrength(passphrase);
  if (!strong) throw new KeyError('weak-passphrase', advice);
}

async function decryptWith(key: openpgp.PrivateKey, passphrase: string): Promise<openpgp.PrivateKey> {
  try {
    return await openpgp.decryptKey({ privateKey: key, passphrase });
  } catch {
    throw new KeyError('wrong-passphrase', t('key_wrong_passphrase'));
  }
}

/**
 * A private key re-protected for storage: an encrypted one must open with the passphrase (which
 * proves it is the user's) and is protected again with it under PROTECTION; a bare one is
 * protected with a new passphrase, which must be strong. Merged with the stored copy, if any.
 */
async function privateRecord(
  key: openpgp.PrivateKey,
  passphrase: string | undefined,
  stored?: KeyRecord,
): Promise<KeyRecord> {
  if (key.isDecrypted()) requireStrong(passphrase);
  else requirePassphrase(passphrase);
  const bare = key.isDecrypted() ? key : await decryptWith(key, passphrase);
  const protectedKey = await openpgp.encryptKey({ privateKey: bare, passphrase, config: PROTECTION });
  const pub = await publicRecord(protectedKey.toPublic(), stored);
  // The private copy gets what the stored public one had too (revocations, certified users).
  const merged = await protectedKey.update(await openpgp.readKey({ armoredKey: pub.armoredPublic }));
  return { ...pub, hasPrivate: true, armoredPrivate: merged.armor() };
}

/**
 * A public key merged into the stored copy (key.update): a copy imported again, however old, adds
 * what it has and drops nothing, so a revocation stays; the private half, if stored, is kept.
 */
async function publicRecord(key: openpgp.PublicKey, stored?: KeyRecord): Promise<KeyRecord> {
  const merged = stored ? await (await openpgp.readKey({ armoredKey: stored.armoredPublic })).update(key) : key;
  return {
    fingerprint: merged.getFingerprint().toUpperCase(),
    keyIds: merged.getKeyIDs().map((id) => id.toHex().toUpperCase()),
    userIds: (await keyIdentity(merged)).userIds,
    hasPrivate: !!stored?.armoredPrivate,
    algorithm: describeAlgorithm(merged),
    created: merged.getCreationTime().toISOString(),
    armoredPublic: merged.armor(),
    ...(stored?.armoredPrivate ? { armoredPrivate: stored.armoredPrivate } : {}),
  };
}

function describeAlgorithm(key: openpgp.Key): string {
  const info = key.getAlgorithmInfo();
  return 'curve' in info && info.curve
    ? `${info.algorithm} (${info.curve})`
    : `${info.algorithm} ${info.bits ?? ''}`.trim();
}

function toInfo(r: KeyRecord): KeyInfo {
  return {
    fingerprint: r.fingerprint,
    keyIds: r.keyIds,
    userIds: r.userIds,
    hasPrivate: r.hasPrivate,
    algorithm: r.algorithm,
    created: r.created,
  };
}
