// A hostile sender against the key store: a copy of a contact's key with an
// extra, uncertified user ID, and an old copy of a key its owner revoked.
import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import * as openpgp from 'openpgp';
import { decryptBlock } from '../lib/decrypt.js';
import { KeyStore } from '../lib/keystore.js';
import { encryptText, makeParty, type Party } from './mail-fixtures.js';

let n = 0;
const freshStore = () => KeyStore.open(`key-merge-test-${n++}`);
let alice: Party, bob: Party, carol: Party;
before(async () => {
  [alice, bob, carol] = await Promise.all([
    makeParty('Alice', 'alice@example.org'),
    makeParty('Bob', 'bob@example.org'),
    makeParty('Carol', 'carol@example.org'),
  ]);
});

/** Bob's public key with "Alice CEO <ceo@example.org>" put first, without any self-certification. */
function withUncertifiedUserFirst(party: Party): string {
  const packets = party.publicKey.toPacketList();
  const list = new openpgp.PacketList<openpgp.AnyPacket>();
  list.push(packets[0], openpgp.UserIDPacket.fromObject({ name: 'Alice CEO', email: 'ceo@example.org' }));
  for (const p of packets.slice(1)) list.push(p);
  return new openpgp.PublicKey(list).armor();
}

/** What Alice's badge says about a message Bob signed, with the store's keys. */
async function badgeFor(store: KeyStore, from: string) {
  const armored = await encryptText('the invoice is attached', [alice], bob);
  return decryptBlock(
    { kind: 'encrypted', pgpMime: false, armored },
    { unlocked: [alice.privateKey], lockedKeyIds: new Set(), verificationKeys: await store.verificationKeys() },
    from,
  );
}

describe('key store against a hostile sender', () => {
  it('names the signer by a certified user ID: an unsigned user ID put first, on import or re-import, names nobody', async () => {
    const forged = withUncertifiedUserFirst(bob);
    assert.equal((await openpgp.readKey({ armoredKey: forged })).getUserIDs()[0], 'Alice CEO <ceo@example.org>');
    for (const imports of [[bob.publicArmored, forged], [forged]]) {
      const store = await freshStore();
      for (const armored of imports) await store.importArmored(armored);
      const [info] = await store.list();
      assert.deepEqual(info.userIds, ['Bob <bob@example.org>'], 'the key list shows only what Bob certified');
      const r = await badgeFor(store, 'Bob <bob@example.org>');
      assert.equal(r.signature.status, 'valid');
      assert.equal(r.signature.signer, 'Bob <bob@example.org>');
      assert.deepEqual(r.signature.addresses, ['bob@example.org']);
      assert.equal(r.signature.fingerprint, bob.publicKey.getFingerprint().toUpperCase());
      assert.doesNotMatch(r.summary, /CEO|ceo@/);
      store.close();
    }
  });

  it('merges a key imported again: a new certified user ID is added, nothing is dropped', async () => {
    const store = await freshStore();
    await store.importArmored(bob.publicArmored);
    // Bob adds and certifies a second address, then sends his new key.
    const extended = await openpgp.reformatKey({
      privateKey: bob.privateKey,
      userIDs: [
        { name: 'Bob', email: 'bob@example.org' },
        { name: 'Bob', email: 'bob@work.example' },
      ],
      format: 'object',
    });
    await store.importArmored(extended.publicKey.armor());
    await store.importArmored(bob.publicArmored); // the old copy again
    const [info] = await store.list();
    assert.deepEqual(info.userIds.sort(), ['Bob <bob@example.org>', 'Bob <bob@work.example>']);
    store.close();
  });

  it('never strips a revocation: an old copy of a revoked key imported again stays revoked', async () => {
    const { publicKey: revoked } = await openpgp.revokeKey({ key: carol.privateKey, format: 'armored' });
    for (const order of [
      [revoked, carol.publicArmored],
      [carol.publicArmored, revoked, carol.publicArmored],
    ]) {
      const store = await freshStore();
      for (const armored of order) await store.importArmored(armored);
      const [key] = await store.verificationKeys();
      assert.equal(await key.isRevoked(), true, 'still revoked after the old copy');
      // Carol's private key imported later (she had it backed up) must not undo it either.
      await store.importArmored(carol.privateArmored, carol.passphrase);
      assert.equal(await (await store.verificationKeys())[0].isRevoked(), true, 'still revoked after her private key');
      const signed = await encryptText('pay this invoice', [alice], carol);
      const r = await decryptBlock(
        { kind: 'encrypted', pgpMime: false, armored: signed },
        { unlocked: [alice.privateKey], lockedKeyIds: new Set(), verificationKeys: await store.verificationKeys() },
      );
      assert.notEqual(r.signature.status, 'valid');
      assert.match(r.summary, /revoked/);
      store.close();
    }
  });
});
