// OpenPGP keys at rest in IndexedDB. Private keys are stored only in their
// passphrase-encrypted armored form; an unencrypted private key offered for
// import is encrypted with the passphrase given before it is written. Every
// write is one IndexedDB transaction, so a failure (quota, abort) leaves the
// previous state intact.
import { openDB, type IDBPDatabase } from 'idb';
import * as openpgp from 'openpgp';
import { KeyError, describeStorageError } from './errors.js';

export interface KeyInfo {
  fingerprint: string;
  /** Key IDs (hex) of the primary key and all subkeys, for recipient matching. */
  keyIds: string[];
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
    if (armored.length > MAX_KEY_ARMOR_BYTES)
      throw new KeyError('too-large', 'That key block is too large (over 1 MB).');
    let keys: openpgp.Key[];
    try {
      keys = await openpgp.readKeys({ armoredKeys: armored.trim() });
    } catch {
      throw new KeyError('malformed', 'That is not a valid armored OpenPGP key block.');
    }
    const records: KeyRecord[] = [];
    for (const key of keys) {
      if (key.isPrivate()) records.push(await privateRecord(key, passphrase));
      else records.push(await publicRecord(key));
    }
    await this.putAll(records);
    return records.map(toInfo);
  }

  /** Generates a Curve25519 key pair protected by passphrase. */
  async generate(
    opts: { name: string; email: string; passphrase: string },
    onProgress: Progress = () => {},
  ): Promise<KeyInfo> {
    requirePassphrase(opts.passphrase);
    if (!/^[^\s@<>]+@[^\s@<>]+$/.test(opts.email)) throw new KeyError('bad-input', 'Enter a valid email address.');
    onProgress(0.1, 'Generating key pair…');
    const { privateKey } = await openpgp.generateKey({
      type: 'ecc',
      curve: 'curve25519Legacy',
      userIDs: [{ name: opts.name.trim() || undefined, email: opts.email }],
      passphrase: opts.passphrase,
      format: 'object',
    });
    onProgress(0.7, 'Saving…');
    const record = await privateRecord(privateKey, opts.passphrase);
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
    if (!rec.armoredPrivate) throw new KeyError('no-private', 'This is a public key only; nothing to unlock.');
    const key = await openpgp.readPrivateKey({ armoredKey: rec.armoredPrivate });
    return decryptWith(key, passphrase);
  }

  /** Public keys of everyone (own keys and contacts), for signature checks. */
  async verificationKeys(): Promise<openpgp.PublicKey[]> {
    const records = (await this.db.getAll(STORE)) as KeyRecord[];
    return Promise.all(records.map((r) => openpgp.readKey({ armoredKey: r.armoredPublic })));
  }

  private async get(fingerprint: string): Promise<KeyRecord> {
    const rec = (await this.db.get(STORE, fingerprint)) as KeyRecord | undefined;
    if (!rec) throw new KeyError('not-found', `No key with fingerprint ${fingerprint}.`);
    return rec;
  }

  private async putAll(records: KeyRecord[]): Promise<void> {
    const tx = this.db.transaction(STORE, 'readwrite');
    try {
      for (const rec of records) {
        const old = (await tx.store.get(rec.fingerprint)) as KeyRecord | undefined;
        // Importing a contact's public key must not drop our private half.
        const merged =
          old?.armoredPrivate && !rec.armoredPrivate
            ? { ...rec, armoredPrivate: old.armoredPrivate, hasPrivate: true }
            : rec;
        await tx.store.put(merged);
      }
      await tx.done;
    } catch (e) {
      // All or nothing: roll back the records already put in this transaction.
      try {
        tx.abort();
      } catch {
        // Already aborted by the failure itself.
      }
      tx.done.catch(() => {});
      throw new KeyError('storage', describeStorageError(e, 'The key was not saved'));
    }
  }
}

function requirePassphrase(passphrase: string | undefined): asserts passphrase is string {
  if (!passphrase || passphrase.length < 8) {
    throw new KeyError('bad-input', 'A passphrase of at least 8 characters is required to protect a private key.');
  }
}

async function decryptWith(key: openpgp.PrivateKey, passphrase: string): Promise<openpgp.PrivateKey> {
  try {
    return await openpgp.decryptKey({ privateKey: key, passphrase });
  } catch {
    throw new KeyError('wrong-passphrase', 'Wrong passphrase for this key.');
  }
}

async function privateRecord(key: openpgp.PrivateKey, passphrase: string | undefined): Promise<KeyRecord> {
  requirePassphrase(passphrase);
  // Prove the passphrase unlocks it, or encrypt a bare key with it.
  const armoredPrivate = key.isDecrypted()
    ? (await openpgp.encryptKey({ privateKey: key, passphrase })).armor()
    : (await decryptWith(key, passphrase), key.armor());
  return { ...(await publicRecord(key.toPublic())), hasPrivate: true, armoredPrivate };
}

async function publicRecord(key: openpgp.PublicKey): Promise<KeyRecord> {
  return {
    fingerprint: key.getFingerprint().toUpperCase(),
    keyIds: key.getKeyIDs().map((id) => id.toHex().toUpperCase()),
    userIds: key.getUserIDs(),
    hasPrivate: false,
    algorithm: describeAlgorithm(key),
    created: key.getCreationTime().toISOString(),
    armoredPublic: key.armor(),
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
