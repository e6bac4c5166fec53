import assert from 'node:assert/strict';
import { test } from 'node:test';
import { findPgpBlocks, isEncrypted, isPgpMime } from '../pgp.js';

const ENC = '-----BEGIN PGP MESSAGE-----\n\nwcBMA\n-----END PGP MESSAGE-----';
const SIGNED =
  '-----BEGIN PGP SIGNED MESSAGE-----\nHash: SHA256\n\nI agree.\n-----BEGIN PGP SIGNATURE-----\n\nwnUE\n-----END PGP SIGNATURE-----';
const PGP_MIME = 'Content-Type: multipart/encrypted;\n protocol="application/pgp-encrypted"; boundary=b\n\n';

test('armored blocks: encrypted (inline or PGP/MIME) and cleartext-signed', () => {
  assert.deepEqual(findPgpBlocks(`hi\n${ENC}\nbye\n${SIGNED}`), [
    { kind: 'encrypted', armored: ENC, pgpMime: false },
    { kind: 'cleartext-signed', armored: SIGNED, pgpMime: false },
  ]);
  assert.deepEqual(findPgpBlocks(`${PGP_MIME}--b\n${ENC}\n--b--`), [
    { kind: 'encrypted', armored: ENC, pgpMime: true },
  ]);
  // A page that shows the MIME type apart from the text.
  assert.equal(findPgpBlocks(ENC, 'multipart/encrypted; protocol="application/pgp-encrypted"')[0].pgpMime, true);
  assert.ok(isPgpMime(PGP_MIME));
  assert.equal(isPgpMime('Content-Type: multipart/signed; protocol="application/pgp-signature"'), false);
});

test('isEncrypted: only an encrypted block counts', () => {
  assert.equal(isEncrypted(`Subject: x\n\n${ENC}`), true);
  assert.equal(isEncrypted(SIGNED), false);
  assert.equal(isEncrypted('-----BEGIN PGP MESSAGE----- but never ended'), false);
});
