import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as openpgp from 'openpgp';
import { KeyStore } from '../lib/keystore.js';
import { KeyError } from '../lib/errors.js';

let dbCounter = 0;
const freshStore = () => KeyStore.open(`keystore-test-${dbCounter++}`);
const PASS = 'correct horse battery';

async function externalKey(passphrase?: string) {
  return openpgp.generateKey({
    type: 'ecc',
    userIDs: [{ name: 'Bob', email: 'bob@example.org' }],
    passphrase,
    format: 'armored',
  });
}

async function rejectsWith(p: Promise<unknown>, code: string) {
  await assert.rejects(p, (e: unknown) => e instanceof KeyError && e.code === code);
}

/** How the stored private key is protected: S2K type and usage octet (253 = AEAD, 254 = CFB + SHA-1). */
async function storedProtection(dbName: string, fingerprint: string) {
  const db = await (await import('idb')).openDB(dbName);
  const rec = await db.get('keys', fingerprint);
  db.close();
  const key = await openpgp.readPrivateKey({ armoredKey: rec.armoredPrivate });
  return [key.keyPacket, ...key.subkeys.map((s) => s.keyPacket)].map((p) => {
    const packet = p as unknown as { s2k: { type: string }; s2kUsage: number; isEncrypted: boolean };
    return { s2k: packet.s2k.type, usage: packet.s2kUsage, encrypted: packet.isEncrypted };
  });
}

describe('KeyStore', () => {
  it('generates a key that is passphrase-encrypted at rest and round-trips through unlock', async () => {
    const store = await freshStore();
    const steps: number[] = [];
    const info = await store.generate({ name: 'Alice', email: 'alice@example.org', passphrase: PASS }, (f) =>
      steps.push(f),
    );
    assert.deepEqual(steps.at(-1), 1);
    assert.ok(
      steps.every((f, i) => i === 0 || f >= steps[i - 1]),
      'progress is monotonic',
    );
    assert.deepEqual(info.userIds, ['Alice <alice@example.org>']);
    assert.equal(info.fingerprint.length, 40);
    assert.ok(info.hasPrivate);

    // What is on disk is encrypted: reading it back without a passphrase gives a locked key.
    const onDisk = await (await import('idb')).openDB(`keystore-test-${dbCounter - 1}`);
    const rec = await onDisk.get('keys', info.fingerprint);
    onDisk.close();
    const stored = await openpgp.readPrivateKey({ armoredKey: rec.armoredPrivate });
    assert.equal(stored.isDecrypted(), false);

    const unlocked = await store.unlock(info.fingerprint, PASS);
    assert.equal(unlocked.isDecrypted(), true);
    assert.equal(unlocked.getFingerprint().toUpperCase(), info.fingerprint);
    await rejectsWith(store.unlock(info.fingerprint, 'wrong passphrase!'), 'wrong-passphrase');
    store.close();
  });

  it('imports an encrypted private key only with its passphrase; a wrong one stores nothing', async () => {
    const store = await freshStore();
    const { privateKey, publicKey } = await externalKey(PASS);
    await rejectsWith(store.importArmored(privateKey, 'not the passphrase'), 'wrong-passphrase');
    assert.deepEqual(await store.list(), []);
    const [info] = await store.importArmored(privateKey, PASS);
    assert.ok(info.hasPrivate);
    const exported = await openpgp.readKey({ armoredKey: await store.exportPublic(info.fingerprint) });
    assert.equal(exported.isPrivate(), false, 'export gives the public key only');
    assert.equal(exported.getFingerprint(), (await openpgp.readKey({ armoredKey: publicKey })).getFingerprint());
    store.close();
  });

  it('encrypts an unencrypted private key before storing it', async () => {
    const store = await freshStore();
    const { privateKey } = await externalKey();
    await rejectsWith(store.importArmored(privateKey), 'bad-input');
    const [info] = await store.importArmored(privateKey, PASS);
    await rejectsWith(store.unlock(info.fingerprint, 'some other passphrase'), 'wrong-passphrase');
    assert.ok((await store.unlock(info.fingerprint, PASS)).isDecrypted());
    store.close();
  });

  it('keeps the private half when the same key is later imported as public', async () => {
    const store = await freshStore();
    const { privateKey, publicKey } = await externalKey(PASS);
    const [info] = await store.importArmored(privateKey, PASS);
    await store.importArmored(publicKey);
    const [listed] = await store.list();
    assert.equal(listed.hasPrivate, true);
    assert.ok((await store.unlock(info.fingerprint, PASS)).isDecrypted());
    store.close();
  });

  it('protects generated and imported private keys with Argon2id and AEAD, not iterated SHA-256 and CFB', async () => {
    const name = `keystore-test-${dbCounter}`;
    const store = await freshStore();
    const generated = await store.generate({ name: 'A', email: 'a@example.org', passphrase: PASS });
    // An OpenPGP.js default key: iterated-and-salted S2K, CFB with a SHA-1 checksum.
    const { privateKey } = await externalKey(PASS);
    const before = await openpgp.readPrivateKey({ armoredKey: privateKey });
    assert.equal((before.keyPacket as unknown as { s2k: { type: string } }).s2k.type, 'iterated');
    const [imported] = await store.importArmored(privateKey, PASS);
    const bare = await store.importArmored((await externalKey()).privateKey, PASS);
    for (const fp of [generated.fingerprint, imported.fingerprint, bare[0].fingerprint]) {
      const packets = await storedProtection(name, fp);
      assert.deepEqual(
        packets,
        packets.map(() => ({ s2k: 'argon2', usage: 253, encrypted: true })),
      );
      assert.ok((await store.unlock(fp, PASS)).isDecrypted(), 'the same passphrase still unlocks it');
    }
    store.close();
  });

  it('refuses an easily guessed passphrase for a key it protects, with advice in plain words', async () => {
    const store = await freshStore();
    for (const weak of ['password1234', 'qwertyuiop', 'Summer2024!']) {
      await assert.rejects(
        store.generate({ name: 'A', email: 'a@example.org', passphrase: weak }),
        (e: unknown) => e instanceof KeyError && e.code === 'weak-passphrase' && /too easy to guess/.test(e.message),
        weak,
      );
      await rejectsWith(store.importArmored((await externalKey()).privateKey, weak), 'weak-passphrase');
    }
    assert.deepEqual(await store.list(), []);
    // A key that already has a passphrase keeps it: it is the user's, not one chosen here.
    const { privateKey } = await externalKey('hunter22');
    assert.equal((await store.importArmored(privateKey, 'hunter22')).length, 1);
    store.close();
  });

  it('rejects malformed armor and oversized input with clear errors', async () => {
    const store = await freshStore();
    await rejectsWith(
      store.importArmored('-----BEGIN PGP PUBLIC KEY BLOCK-----\n\nnot base64!!\n-----END PGP PUBLIC KEY BLOCK-----'),
      'malformed',
    );
    await rejectsWith(store.importArmored('x'.repeat(2 << 20)), 'too-large');
    assert.deepEqual(await store.list(), []);
    store.close();
  });

  it('stores contacts public keys for verification and deletes keys', async () => {
    const store = await freshStore();
    const { publicKey } = await externalKey();
    const [info] = await store.importArmored(publicKey);
    assert.equal(info.hasPrivate, false);
    await rejectsWith(store.unlock(info.fingerprint, PASS), 'no-private');
    assert.equal((await store.verificationKeys()).length, 1);
    await store.delete(info.fingerprint);
    assert.deepEqual(await store.list(), []);
    await rejectsWith(store.exportPublic(info.fingerprint), 'not-found');
    store.close();
  });

  it('reports a full disk clearly and writes nothing, even mid-way through a multi-key import', async () => {
    const store = await freshStore();
    const [one, two] = await Promise.all([externalKey(), externalKey()]);
    // One armor block holding two keys, as `gpg --export --armor a b` gives.
    const [k1, k2] = await Promise.all([one, two].map((k) => openpgp.readKey({ armoredKey: k.publicKey })));
    const bundle = openpgp.armor(openpgp.enums.armor.publicKey, new Uint8Array([...k1.write(), ...k2.write()]));
    const realPut = IDBObjectStore.prototype.put;
    let puts = 0;
    IDBObjectStore.prototype.put = function (this: IDBObjectStore, ...args: Parameters<IDBObjectStore['put']>) {
      // The first record goes in, the second hits the quota.
      if (++puts === 2) throw new DOMException('quota', 'QuotaExceededError');
      return realPut.apply(this, args);
    };
    try {
      await assert.rejects(
        store.importArmored(bundle),
        (e: unknown) => e instanceof KeyError && e.code === 'storage' && /storage is full/.test(e.message),
      );
    } finally {
      IDBObjectStore.prototype.put = realPut;
    }
    assert.deepEqual(await store.list(), [], 'nothing half-written');
    assert.equal((await store.importArmored(bundle)).length, 2, 'works again once space is back');
    store.close();
  });
});
