import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import * as openpgp from 'openpgp';
import { MAX_ARMORED_BYTES, type KeyContext } from '../../mail/decrypt.js';
import { decryptBlock } from '../lib/decrypt.js';
import { findPgpBlocks, isPgpMime } from '../../mail/pgp.js';
import { fromHeader } from '../../mail/signer.js';
import { encryptText, inlinePgpMessage, makeParty, pgpMimeMessage, type Party } from './mail-fixtures.js';

let alice: Party, bob: Party, eve: Party;
before(async () => {
  [alice, bob, eve] = await Promise.all([
    makeParty('Alice', 'alice@example.org'),
    makeParty('Bob', 'bob@example.org'),
    makeParty('Eve', 'eve@example.org'),
  ]);
});

const ids = (p: Party) => p.privateKey.getKeyIDs().map((k) => k.toHex().toUpperCase());
/** Alice's view: her key unlocked, Bob's public key known. */
const aliceKeys = (): KeyContext => ({
  unlocked: [alice.privateKey],
  lockedKeyIds: new Set(),
  verificationKeys: [alice.publicKey, bob.publicKey],
});

async function decryptRaw(raw: string, keys: KeyContext) {
  const blocks = findPgpBlocks(raw);
  assert.equal(blocks.length, 1);
  return decryptBlock(blocks[0], keys);
}

describe('decryptBlock', () => {
  it('decrypts PGP/MIME, reads protected headers and attachments, verifies the signature', async () => {
    const raw = await pgpMimeMessage(bob, alice, 'Quarterly numbers', 'The numbers are 1, 2, 3.');
    assert.ok(isPgpMime(raw));
    const r = await decryptRaw(raw, aliceKeys());
    assert.equal(r.status, 'decrypted');
    assert.equal(r.text?.trim(), 'The numbers are 1, 2, 3.');
    assert.equal(r.subject, 'Quarterly numbers');
    assert.deepEqual(
      r.attachments?.map((a) => [a.filename, a.mimeType]),
      [['report.pdf', 'application/pdf']],
    );
    assert.equal(r.signature.status, 'valid');
    assert.equal(r.signature.signer, 'Bob <bob@example.org>');
    assert.equal(r.signature.fingerprint, bob.publicKey.getFingerprint().toUpperCase());
    assert.ok(ids(bob).includes(r.signature.keyId!));
    assert.match(r.summary, /signed by Bob <bob@example.org> on .* \(signature verified; key [0-9A-F]{4} /);
    // The result's badge part goes to webmail pages: the decrypted entity stays out of it.
    assert.doesNotMatch(JSON.stringify(r), /Content-Disposition|JVBERi0xLjQK/);
  });

  it('a message Bob signed, replayed under another From, warns that the sender may be forged', async () => {
    const signedAt = Date.now();
    const armored = await encryptText('Please wire 10,000 EUR today.', [alice], bob);
    const block = { kind: 'encrypted', pgpMime: false, armored } as const;
    const asBob = await decryptBlock(block, aliceKeys(), '"Bob" <Bob@Example.org>');
    assert.equal(asBob.signature.status, 'valid');
    assert.equal(asBob.signature.fromMatches, true);
    const at = Date.parse(asBob.signature.signedAt!);
    assert.ok(Math.abs(at - signedAt) < 60_000, `signature time ${asBob.signature.signedAt} is when it was made`);
    for (const from of [
      'CEO <ceo@example.org>',
      '"bob@example.org" <ceo@example.org>', // Bob's address as a display name
      'Bob <bob@example.org>, CEO <ceo@example.org>',
      '',
    ]) {
      const replayed = await decryptBlock(block, aliceKeys(), from);
      assert.equal(replayed.signature.status, 'valid', from);
      assert.equal(replayed.signature.fromMatches, false, from);
      assert.match(replayed.summary, /sender may be forged: signed by Bob <bob@example.org> on /, from);
      assert.doesNotMatch(replayed.summary, /signature verified/, from);
    }
    // Without a From to check against (the client's own path), nothing is claimed about it.
    assert.equal((await decryptBlock(block, aliceKeys())).signature.fromMatches, undefined);
    // Where a webmail shows only the name, the raw message's (folded) From gives the address.
    const raw = `Subject: x\r\nFrom: "Bob"\r\n <bob@example.org>\r\nTo: alice@example.org\r\n\r\nFrom: ceo@example.org\r\n`;
    assert.equal(fromHeader(raw), '"Bob" <bob@example.org>');
    assert.equal((await decryptBlock(block, aliceKeys(), fromHeader(raw))).signature.fromMatches, true);
  });

  it('decrypts inline PGP with surrounding text', async () => {
    const raw = await inlinePgpMessage(bob, alice, 'hi', 'inline body ✓');
    const r = await decryptRaw(`Some quoted text\n${raw}\n-- \nsig`, aliceKeys());
    assert.equal(r.status, 'decrypted');
    assert.equal(r.text, 'inline body ✓');
    assert.equal(r.signature.status, 'valid');
  });

  it('reports unsigned mail and unknown signers distinctly', async () => {
    const unsigned = await decryptRaw(await inlinePgpMessage(bob, alice, 's', 'x', false), aliceKeys());
    assert.equal(unsigned.status, 'decrypted');
    assert.equal(unsigned.signature.status, 'unsigned');
    const byEve = await decryptBlock(
      { kind: 'encrypted', pgpMime: false, armored: await encryptText('from eve', [alice], eve) },
      aliceKeys(),
    );
    assert.equal(byEve.status, 'decrypted');
    assert.equal(byEve.signature.status, 'unknown-signer');
    assert.ok(ids(eve).includes(byEve.signature.keyId!));
  });

  it('flags a signature over altered content as invalid', async () => {
    // Bob signs "original"; the literal packet is then changed before encryption.
    const signed = await openpgp.sign({
      message: await openpgp.createMessage({ text: 'original' }),
      signingKeys: bob.privateKey,
      format: 'object',
    });
    // setText is marked private in openpgp's typings but is the packet's public JS API.
    const literal = signed.packets.findPacket(openpgp.enums.packet.literalData) as unknown as {
      setText(t: string): void;
    };
    literal.setText('altered');
    const armored = await openpgp.encrypt({ message: signed, encryptionKeys: alice.publicKey });
    const r = await decryptBlock({ kind: 'encrypted', pgpMime: false, armored }, aliceKeys());
    assert.equal(r.status, 'decrypted');
    assert.equal(r.signature.status, 'invalid');
    assert.equal(r.signature.signer, 'Bob <bob@example.org>');
    assert.match(r.summary, /SIGNATURE VERIFICATION FAILED/);
  });

  it('says "locked" for mail to a key without its passphrase, and "not for this key" otherwise', async () => {
    const armored = await encryptText('secret', [alice], bob);
    const locked = await decryptBlock(
      { kind: 'encrypted', pgpMime: false, armored },
      { unlocked: [], lockedKeyIds: new Set(ids(alice)), verificationKeys: [] },
    );
    assert.equal(locked.status, 'locked');
    assert.equal(locked.text, undefined);
    const toEve = await encryptText('for eve', [eve], bob);
    const r = await decryptBlock({ kind: 'encrypted', pgpMime: false, armored: toEve }, aliceKeys());
    assert.equal(r.status, 'not-for-this-key');
    assert.equal(r.text, undefined);
    assert.ok(r.recipientKeyIds!.some((id) => ids(eve).includes(id)));
  });

  it('rejects malformed armor, tampered ciphertext and oversized input without showing content', async () => {
    const armored = await encryptText('integrity matters', [alice], bob);
    // Armor around bytes that are no OpenPGP packet (a packet header has its top bit set). Garbling
    // random base64 was flaky: the shifted bytes sometimes parsed as a key packet for another key.
    const notPackets = openpgp.armor(openpgp.enums.armor.message, new Uint8Array(64));
    const malformed = await decryptBlock({ kind: 'encrypted', pgpMime: false, armored: notPackets }, aliceKeys());
    assert.equal(malformed.status, 'malformed');

    // Flip one byte of the encrypted data packet (the last packet), re-armor.
    const base64 = armored
      .split(/\r?\n\r?\n/)[1]
      .split('\n')
      .filter((l) => l && !/^(=|-----)/.test(l))
      .join('');
    const bytes = Uint8Array.from(Buffer.from(base64, 'base64'));
    bytes[bytes.length - 40] ^= 0x01;
    const tampered = openpgp.armor(openpgp.enums.armor.message, bytes);
    const r = await decryptBlock({ kind: 'encrypted', pgpMime: false, armored: tampered }, aliceKeys());
    assert.equal(r.status, 'failed');
    assert.equal(r.text, undefined);

    const huge = await decryptBlock(
      { kind: 'encrypted', pgpMime: false, armored: 'x'.repeat(MAX_ARMORED_BYTES + 1) },
      aliceKeys(),
    );
    assert.equal(huge.status, 'too-large');
  });

  it('verifies cleartext-signed blocks and detects edits', async () => {
    const signed = await openpgp.sign({
      message: await openpgp.createCleartextMessage({ text: 'I agree.' }),
      signingKeys: bob.privateKey,
    });
    const [block] = findPgpBlocks(`prefix\n${signed}\nsuffix`);
    assert.equal(block.kind, 'cleartext-signed');
    const ok = await decryptBlock(block, aliceKeys());
    assert.equal(ok.status, 'verified-only');
    assert.equal(ok.signature.status, 'valid');
    assert.equal(ok.text, 'I agree.');
    const edited = await decryptBlock(
      { ...block, armored: block.armored.replace('I agree.', 'I disagree.') },
      aliceKeys(),
    );
    assert.equal(edited.signature.status, 'invalid');
  });
});
