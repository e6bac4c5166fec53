import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import * as openpgp from 'openpgp';
import { decryptMessage, loadPrivateKey } from '../decrypt.js';
import { isEncrypted } from '../pgp.js';

let pub: openpgp.PublicKey;
let priv: openpgp.PrivateKey;
let armoredLocked: string;

before(async () => {
  const k = await openpgp.generateKey({
    type: 'curve25519',
    userIDs: [{ email: 'p@test.invalid' }],
    passphrase: 'secret',
    format: 'object',
  });
  pub = k.publicKey;
  armoredLocked = k.privateKey.armor();
  priv = await loadPrivateKey(armoredLocked, 'secret');
});

const enc = async (text: string): Promise<string> =>
  openpgp.encrypt({ message: await openpgp.createMessage({ text }), encryptionKeys: pub }) as Promise<string>;

const lf = (s: string): string => s.replace(/\r\n/g, '\n');

const pgpMime = (armored: string): string =>
  'From: a@b\r\nSubject: ...\r\nMessage-ID: <m@x>\r\nMIME-Version: 1.0\r\n' +
  'Content-Type: multipart/encrypted; protocol="application/pgp-encrypted"; boundary="b"\r\n\r\n' +
  `--b\r\nContent-Type: application/pgp-encrypted\r\n\r\nVersion: 1\r\n--b\r\nContent-Type: application/octet-stream\r\n\r\n${armored}\r\n--b--\r\n`;

test('PGP/MIME whose payload is a MIME entity: outer headers (minus Content-*) + the entity', async () => {
  const entity = 'Content-Type: text/plain; charset=utf-8\r\n\r\nBuy cheap pills now';
  const out = await decryptMessage(pgpMime(await enc(entity)), [priv]);
  assert.match(out, /^From: a@b\r\nSubject: \.\.\.\r\nMessage-ID: <m@x>\r\n/);
  assert.doesNotMatch(out, /multipart\/encrypted|MIME-Version/);
  assert.ok(out.endsWith(lf(entity)), 'OpenPGP text mode canonicalizes line ends; the entity is otherwise intact');
});

test('a payload that is a whole message (protected headers) replaces the outer one', async () => {
  const whole = 'From: real@sender\r\nSubject: the real subject\r\n\r\nbody';
  assert.equal(await decryptMessage(pgpMime(await enc(whole)), [priv]), lf(whole));
  const mbox = 'From someone@x Thu Aug 22 2002\nSubject: s\n\nbody';
  assert.equal(await decryptMessage(pgpMime(await enc(mbox)), [priv]), mbox);
});

test('inline PGP with a plain-text payload becomes the body; unencrypted mail passes through', async () => {
  const out = await decryptMessage(`From: a@b\nSubject: hi\n\n${await enc('just text')}`, [priv]);
  assert.equal(out, 'From: a@b\r\nSubject: hi\r\n\r\njust text');
  const plain = 'From: a@b\nSubject: x\n\nhello';
  assert.equal(isEncrypted(plain), false);
  assert.equal(await decryptMessage(plain, [priv]), plain);
});

test('a locked key needs its passphrase; a wrong key fails clearly', async () => {
  await assert.rejects(loadPrivateKey(armoredLocked), /locked/);
  await assert.rejects(loadPrivateKey(armoredLocked, 'wrong'));
  const other = await openpgp.generateKey({
    type: 'curve25519',
    userIDs: [{ email: 'o@test.invalid' }],
    format: 'object',
  });
  await assert.rejects(decryptMessage(pgpMime(await enc('x')), [other.privateKey]));
});
