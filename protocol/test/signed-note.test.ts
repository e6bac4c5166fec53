// Signed notes, checkpoints and cosignatures against the C2SP examples, the
// examples of Go's golang.org/x/mod/sumdb/note, and notes made by Go's x/mod
// and filippo.io/torchwood (the cosigner litewitness runs) in both directions.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ed25519 } from '@noble/curves/ed25519.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { formatCheckpoint, parseCheckpoint } from '../checkpoint.js';
import {
  cosignatureMessage,
  formatNote,
  formatVerifierKey,
  fromBase64,
  parseNote,
  parseVerifierKey,
  SIG_COSIGNATURE_V1,
  SIG_ED25519,
  signEd25519,
  verifyCosignature,
  verifyEd25519,
} from '../signed-note.js';
import { goReference } from './tlog-vectors.js';

// c2sp.org/signed-note's example note.
const C2SP_NOTE =
  'Ognuno sta solo sul cuor della terra\ntrafitto da un raggio di sole:\n\ned è subito sera.\n\n' +
  '— quasimodo.example/salvatore NnugSzTjtVAewIS+Z/iJhUPeFDkO/5QQ2i5ddnGITLlC+EhfLW9oJKONrMouFSQU0xMcXxj99ihAQwaqP3ZekRwNtIc=\n';
// c2sp.org/tlog-cosignature's example checkpoint with a log signature and a witness cosignature.
const C2SP_COSIGNED =
  'example.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n' +
  '— example.com/behind-the-sofa Az3grlgtzPICa5OS8npVmf1Myq/5IZniMp+ZJurmRDeOoRDe4URYN7u5/Zhcyv2q1gGzGku9nTo+zyWE+xeMcTOAYQ8=\n' +
  '— witness.example.com/w1 jWbPPwAAAABkGFDLEZMHwSRaJNiIDoe9DYn/zXcrtPHeolMI5OWXEhZCB9dlrDJsX3b2oyin1nPZqhf5nNo0xUe+mbIUBkBIfZ+qnA==\n';
// golang.org/x/mod/sumdb/note's package documentation.
const PETER_VKEY = 'PeterNeumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW';
const ENOCH_VKEY = 'EnochRoot+af0cfe78+ATtqJ7zOtqQtYqOo0CpvDXNlMhV3HeJDpjrASKGLWdop';
const PETER_TEXT =
  "If you think cryptography is the answer to your problem,\nthen you don't know what your problem is.\n";
const PETER_NOTE =
  `${PETER_TEXT}\n— PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n` +
  '— EnochRoot rwz+eBzmZa0SO3NbfRGzPCpDckykFXSdeX+MNtCOXm2/5n2tiOHp+vAF1aGrQ5ovTG01oOTGwnWLox33WWd1RvMc+QQ=\n';
// Its signer key PRIVATE+KEY+PeterNeumann+c74f20a3+AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz: type byte, then the seed.
const PETER_SEED = fromBase64('AYEKFALVFGyNhPJEMzD1QIDr+Y7hfZx09iUvxdXHKDFz')!.slice(1);

test('the C2SP example note: text up to the last blank line, one 64-byte Ed25519 signature with its key ID', () => {
  const n = parseNote(C2SP_NOTE);
  assert.equal(n.text, 'Ognuno sta solo sul cuor della terra\ntrafitto da un raggio di sole:\n\ned è subito sera.\n');
  assert.equal(n.signatures.length, 1);
  assert.equal(n.signatures[0].name, 'quasimodo.example/salvatore');
  assert.equal(n.signatures[0].keyId, 0x367ba04b);
  assert.equal(n.signatures[0].signature.length, 64);
  assert.equal(formatNote(n), C2SP_NOTE, 'formats back to the same bytes');
});

test('the C2SP cosigned checkpoint: its checkpoint, and the cosignature’s timestamp and signed message', () => {
  const n = parseNote(C2SP_COSIGNED);
  const c = parseCheckpoint(n.text);
  assert.deepEqual([c.origin, c.size, c.extensions], ['example.com/behind-the-sofa', 20852163, []]);
  assert.equal(formatCheckpoint(c), n.text);
  const w = n.signatures[1];
  assert.equal(w.name, 'witness.example.com/w1');
  assert.equal(w.signature.length, 8 + 64);
  const time = Number(new DataView(w.signature.buffer, w.signature.byteOffset).getBigUint64(0));
  assert.equal(time, 1679315147, 'the timestamp of the spec’s example message');
  assert.equal(
    new TextDecoder().decode(cosignatureMessage(n.text, time)),
    'cosignature/v1\ntime 1679315147\nexample.com/behind-the-sofa\n20852163\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n',
  );
});

test('x/mod’s example: both signatures verify under their vkeys, and the seed gives the same key and signature', () => {
  const n = parseNote(PETER_NOTE);
  const peter = parseVerifierKey(PETER_VKEY);
  const enoch = parseVerifierKey(ENOCH_VKEY);
  assert.equal(peter.type, SIG_ED25519);
  assert.ok(verifyEd25519(n, peter));
  assert.ok(verifyEd25519(n, enoch));
  assert.equal(formatVerifierKey('PeterNeumann', SIG_ED25519, ed25519.getPublicKey(PETER_SEED)), PETER_VKEY);
  assert.deepEqual(signEd25519(PETER_TEXT, 'PeterNeumann', PETER_SEED), n.signatures[0]);
  // Another text, a flipped signature bit, or a key of the same name and another ID do not verify.
  assert.ok(!verifyEd25519({ ...n, text: PETER_TEXT.replace('answer', 'Answer') }, peter));
  const flipped = { ...n.signatures[0], signature: n.signatures[0].signature.map((b, i) => (i ? b : b ^ 1)) };
  assert.ok(!verifyEd25519({ ...n, signatures: [flipped] }, peter));
  assert.ok(!verifyEd25519(n, { ...peter, keyId: peter.keyId ^ 1 }), 'a signature of an unknown key is ignored');
});

test('malformed notes and keys are refused with a reason', () => {
  const bad: [string, RegExp][] = [
    ['text without signatures\n', /no blank line/],
    ['text\n\n', /no signature lines/],
    ['text\n\n— name c2ln\n', /bad signature line/], // four bytes: no room for a key ID and a signature
    [
      'text\n\n- PeterNeumann x08go/ZJkuBS9UG/SffcvIAQxVBtiFupLLr8pAcElZInNIuGUgYN1FFYC2pZSNXgKvqfqdngotpRZb6KE6RyyBwJnAM=\n',
      /bad signature line/,
    ],
    ['text\u0007\n\n— a AAAAAAA=\n', /control character/],
    [`${PETER_NOTE}`.replace('=\n— Enoch', '=\n— Enoch Root'), /bad signature line/],
    [`t\n\n${'— a AAAAAAA=\n'.repeat(101)}`, /more than 100 signatures/],
    ['t\n\n— a AAAAAAB=\n', /bad signature line/], // non-canonical base64
  ];
  for (const [note, why] of bad) assert.throws(() => parseNote(note), why, JSON.stringify(note));
  assert.throws(() => parseVerifierKey('PeterNeumann+c74f20a4+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'), /key ID/);
  assert.throws(
    () => parseVerifierKey('Peter Neumann+c74f20a3+ARpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'),
    /not a verifier key/,
  );
  assert.throws(
    () => parseVerifierKey('PeterNeumann+173116ae+ZRpc2QcUPDhMQegwxbzhKqiBfsVkmqq/LDE4izWy10TW'),
    /type 101/,
  );
  assert.throws(() => parseCheckpoint('origin\n01\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n'), /bad tree size/);
  assert.throws(
    () => parseCheckpoint('origin\n1\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n\n'),
    /empty extension/,
  );
  assert.throws(() => parseCheckpoint('origin\n1\nAAAA\n'), /not 32 bytes/);
  assert.throws(() => parseCheckpoint('origin\n1\n'), /fewer than three lines/);
});

const SEED = 'a5'.repeat(32);
const CHECKPOINT = 'example.org/pmf-package-log/test\n3\nCsUYapGGPo4dkMgIAUqom/Xajj7h2fB2MPA3j2jxq2I=\n';

test('a note and a cosignature made by Go (x/mod note, torchwood) verify here under the vkeys computed here', () => {
  const go = goReference<{ vkey: string; note: string; cosignatureVkey: string; cosigned: string }>('sign', {
    name: 'witness.example/w1',
    seed: SEED,
    text: CHECKPOINT,
  });
  const pub = ed25519.getPublicKey(Uint8Array.from(Buffer.from(SEED, 'hex')));
  assert.equal(formatVerifierKey('witness.example/w1', SIG_ED25519, pub), go.vkey);
  assert.equal(formatVerifierKey('witness.example/w1', SIG_COSIGNATURE_V1, pub), go.cosignatureVkey);
  assert.ok(verifyEd25519(parseNote(go.note), parseVerifierKey(go.vkey)));
  const cosigned = parseNote(go.cosigned);
  const time = verifyCosignature(cosigned, parseVerifierKey(go.cosignatureVkey));
  assert.ok(time !== undefined && Math.abs(time - Date.now() / 1000) < 600, `cosignature time ${time}`);
  assert.equal(verifyCosignature(cosigned, parseVerifierKey(go.vkey)), undefined, 'an Ed25519 vkey is no cosigner');
  assert.equal(verifyEd25519(cosigned, parseVerifierKey(go.vkey)), false, 'a cosignature is no note signature');
  const other = { ...cosigned, text: CHECKPOINT.replace('\n3\n', '\n4\n') };
  assert.equal(verifyCosignature(other, parseVerifierKey(go.cosignatureVkey)), undefined, 'another checkpoint');
});

test('a note signed here opens with Go’s x/mod note.Open; altered, it does not', () => {
  const seed = Uint8Array.from(Buffer.from(SEED, 'hex'));
  const vkey = formatVerifierKey('example.org/pmf-package-log/test', SIG_ED25519, ed25519.getPublicKey(seed));
  const note = formatNote({
    text: CHECKPOINT,
    signatures: [signEd25519(CHECKPOINT, 'example.org/pmf-package-log/test', seed)],
  });
  const open = (n: string) =>
    goReference<{ ok: boolean; text?: string; error?: string }>('open', { note: n, vkeys: [vkey] });
  assert.deepEqual(open(note), { ok: true, text: CHECKPOINT, verified: 1, unverified: 0 });
  const altered = open(note.replace('\n3\n', '\n4\n'));
  assert.equal(altered.ok, false);
  assert.match(altered.error!, /invalid signature/);
  assert.equal(bytesToHex(parseVerifierKey(vkey).publicKey), bytesToHex(ed25519.getPublicKey(seed)));
});
