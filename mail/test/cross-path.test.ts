// The same messages through every path that turns mail into features: the
// CLI (mailbox reader, decryption, then extraction as SpamSession.classify
// does it), the extension (the block it decrypts for its badge, rebuilt into
// the message) and training/evaluation (loaders + featurize on the message as
// written). A private verdict means what `evaluate` measured only if all
// paths give the same vector.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { before, test } from 'node:test';
import { readMailbox } from '../../models/data/mailbox.js';
import { decryptBlockWithPlaintext } from '../../extension/lib/decrypt.js';
import { encryptText, makeParty, type Party } from '../../extension/test/mail-fixtures.js';
import { featurize } from '../../models/data/featurize.js';
import { loadJsonl, loadMaildir, loadMbox } from '../../models/data/loaders.js';
import { extractFeatures, makeSpec, type Features } from '../../models/features/index.js';
import { decryptedMessage, decryptMessage } from '../decrypt.js';
import { findPgpBlocks } from '../pgp.js';

const spec = makeSpec({ N: 1 << 20, fIn: 3 });

interface Case {
  name: string;
  /** The message as written: what training and evaluation read. */
  written: string;
  /** The message as delivered (encrypted or not): what the CLI and the extension read. */
  delivered: string;
}

let alice: Party;
let bob: Party;
const cases: Case[] = [];

const outer = 'From: Alice <alice@example.org>\r\nTo: Bob <bob@example.org>\r\nSubject: Quarterly numbers\r\n';

async function pgpMime(name: string, entity: string): Promise<Case> {
  const armored = await encryptText(entity, [bob], alice);
  return {
    name,
    written: `${outer}MIME-Version: 1.0\r\n${entity}`,
    delivered:
      `${outer}Message-ID: <pgp-mime-${cases.length}@example.org>\r\nMIME-Version: 1.0\r\n` +
      'Content-Type: multipart/encrypted; protocol="application/pgp-encrypted"; boundary="b"\r\n\r\n' +
      '--b\r\nContent-Type: application/pgp-encrypted\r\n\r\nVersion: 1\r\n\r\n' +
      `--b\r\nContent-Type: application/octet-stream\r\n\r\n${armored}\r\n--b--\r\n`,
  };
}

before(async () => {
  [alice, bob] = await Promise.all([makeParty('Alice', 'alice@example.org'), makeParty('Bob', 'bob@example.org')]);
  const same = (name: string, raw: string): Case => ({ name, written: raw, delivered: raw });
  cases.push(
    same('plain', `${outer}Content-Type: text/plain\r\n\r\nLunch at noon? Menu: http://cafe.example/menu`),
    same(
      'HTML only',
      `${outer}Content-Type: text/html; charset=utf-8\r\n\r\n<p>Cheap <b>meds</b> &amp; more</p><a href="https://pharma.example/x">buy</a>`,
    ),
    same('headerless text', 'just some text: with a colon\nand a second line about prizes'),
    same(
      'Subject line then body, no blank line',
      'Subject: win big\nClaim your prize now at https://prize.example/\nReally.',
    ),
    await pgpMime(
      'PGP/MIME, text',
      'Content-Type: text/plain; charset=utf-8\r\n\r\nThe numbers are 1, 2, 3. Café at https://q.example/',
    ),
    await pgpMime('PGP/MIME, HTML', 'Content-Type: text/html; charset=utf-8\r\n\r\n<p>Secret <i>html</i> report</p>'),
    {
      name: 'inline PGP',
      written: `${outer}\r\nInline secret: the vault code is 4711, see https://vault.example/`,
      delivered: `${outer}\r\n${await encryptText('Inline secret: the vault code is 4711, see https://vault.example/', [bob], alice)}`,
    },
  );
});

const plain = (f: Features) => ({ rows: [...f.rows], counts: [...f.counts] });

/** CLI: client/node/mailbox reads the file, mail/decrypt decrypts, then SpamSession.classify's extraction. */
async function cliPath(file: string): Promise<Features[]> {
  const out = [];
  for (const m of readMailbox(file))
    out.push(await extractFeatures(await decryptMessage(m.raw, [bob.privateKey]), spec));
  return out;
}

/** Extension: the block it decrypts for its badge, put back into the message it came with. */
async function extensionPath(delivered: string): Promise<Features> {
  const [block] = findPgpBlocks(delivered);
  if (!block) return extractFeatures(delivered, spec);
  const { result, plaintext } = await decryptBlockWithPlaintext(block, {
    unlocked: [bob.privateKey],
    lockedKeyIds: new Set(),
    verificationKeys: [alice.publicKey],
  });
  assert.equal(result.signature.status, 'valid');
  assert.equal(result.signature.signer, 'Alice <alice@example.org>');
  return extractFeatures(decryptedMessage(delivered, plaintext!), spec);
}

const mbox = (messages: string[]): string =>
  messages.map((m) => `From someone@example.org Sat Nov 21 10:00:00 2026\n${m}\n`).join('\n');

test('CLI, extension and training give the same features for the same mail', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-cross-path-'));
  try {
    const write = (name: string, text: string): string => {
      fs.writeFileSync(path.join(dir, name), text);
      return path.join(dir, name);
    };
    const line = (rec: object) => JSON.stringify(rec);
    const delivered = cases.map((c) => c.delivered);
    const written = cases.map((c) => c.written);
    const paths: Record<string, Features[]> = {
      'CLI, JSON-lines "raw"': await cliPath(write('in.jsonl', delivered.map((raw) => line({ raw })).join('\n'))),
      'CLI, JSON-lines "text"': await cliPath(
        write('in-text.jsonl', delivered.map((text) => line({ text })).join('\n')),
      ),
      'CLI, mbox': await cliPath(write('in.mbox', mbox(delivered))),
      extension: await Promise.all(delivered.map(extensionPath)),
      'training, JSON-lines "text"': await featurize(
        loadJsonl(write('train.jsonl', written.map((text) => line({ text, label: 'x' })).join('\n'))),
        spec,
        false,
      ),
      'training, mbox': await featurize(loadMbox(write('train.mbox', mbox(written)), 'x'), spec, false),
    };
    const reference = paths['training, JSON-lines "text"'].map(plain);
    cases.forEach((c, i) => assert.ok(reference[i].rows.length >= 4, `${c.name}: has features`));
    for (const [name, feats] of Object.entries(paths))
      cases.forEach((c, i) =>
        assert.deepEqual(plain(feats[i]), reference[i], `${c.name}: ${name} differs from training`),
      );
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('8-bit mail in mbox and Maildir: the CLI reads the bytes training reads', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-cross-path-'));
  try {
    const latin1 = (s: string) => Uint8Array.from(s, (c) => c.charCodeAt(0));
    const messages = [
      'Subject: Caf\xe9\nContent-Type: text/plain; charset=iso-8859-1\n\nCr\xe8me br\xfbl\xe9e \xe0 volont\xe9',
      'Subject: no charset\n\nna\xefve bytes \xff\xfe in the body',
    ];
    const box = path.join(dir, 'in.mbox');
    fs.writeFileSync(box, latin1(mbox(messages)));
    const md = path.join(dir, 'md', 'x', 'cur');
    fs.mkdirSync(md, { recursive: true });
    messages.forEach((m, i) => fs.writeFileSync(path.join(md, `${i}`), latin1(m)));
    const training = (await featurize(loadMbox(box, 'x'), spec, false)).map(plain);
    assert.deepEqual((await featurize(loadMaildir(path.join(dir, 'md')), spec, false)).map(plain), training);
    for (const file of [box, path.join(dir, 'md', 'x')])
      assert.deepEqual((await cliPath(file)).map(plain), training, file);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
