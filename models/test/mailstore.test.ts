// Training from a provider's own mail store: a Dovecot tree with two users
// (Maildir++ with keywords for one, mbox folders for the other) and
// provider-server's own store with a user's webmail moves.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { openSqliteStore } from '../../provider-server/src/store-sqlite.js';
import { tempDir } from '../../scripts/test/temp-dir.js';
import { run } from '../cli.js';
import { mailStoreMail, providerStoreMail, storeExamples } from '../data/mailstore.js';
import { loadPlainModel } from '../plain/index.js';

const DAY = 86_400;
const msg = (subject: string, body: string, date = 'Mon, 2 Jan 2023 10:00:00 +0000') =>
  `From: x@y.example\r\nSubject: ${subject}\r\nDate: ${date}\r\n\r\n${body}\r\n`;
const hamText = (i: number) => msg(`meeting ${i}`, `Agenda for the project review number ${i}, see you at ten.`);
const spamText = (i: number) => msg(`win ${i}`, `Cheap pills casino bonus ${i}, buy now and win big money.`);

/** A Dovecot Maildir++ folder (`rel` '' is INBOX) with messages delivered at `t0 + i` days. */
function maildir(root: string, rel: string, mails: { text: string; flags?: string; t: number }[], keywords?: string[]) {
  const dir = path.join(root, rel);
  for (const sub of ['cur', 'new', 'tmp']) fs.mkdirSync(path.join(dir, sub), { recursive: true });
  if (keywords) fs.writeFileSync(path.join(dir, 'dovecot-keywords'), keywords.map((k, i) => `${i} ${k}\n`).join(''));
  mails.forEach((m, i) =>
    fs.writeFileSync(path.join(dir, 'cur', `${m.t}.M${i}P1.host,S=1:2,S${m.flags ?? ''}`), m.text),
  );
}

function dovecotTree(): string {
  const root = tempDir('pmf-mailstore-');
  const alice = path.join(root, 'alice', 'Maildir');
  const t0 = 1_700_000_000;
  maildir(
    alice,
    '',
    [
      ...Array.from({ length: 12 }, (_, i) => ({ text: hamText(i), t: t0 + i * DAY })),
      { text: spamText(100), t: t0, flags: 'a' }, // marked Junk, not moved
    ],
    ['$Junk', 'NonJunk'],
  );
  maildir(
    alice,
    '.Junk',
    [
      ...Array.from({ length: 8 }, (_, i) => ({ text: spamText(i), t: t0 + i * DAY })),
      { text: hamText(200), t: t0, flags: 'b' }, // the user's "Not spam", still in Junk
      { text: spamText(300), t: t0 }, // the same campaign as bob's below
    ],
    ['$Junk', 'NonJunk'],
  );
  maildir(alice, '.Trash', [{ text: spamText(400), t: t0 }]);
  maildir(alice, '.Sent', [{ text: hamText(401), t: t0 }]);
  maildir(alice, '.INBOX.Private', [
    { text: msg('secret', '-----BEGIN PGP MESSAGE-----\n\nwcBMA\n-----END PGP MESSAGE-----'), t: t0 },
  ]);
  const bob = path.join(root, 'bob', 'mail');
  fs.mkdirSync(bob, { recursive: true });
  const mbox = (texts: string[]) => texts.map((t) => `From x@y.example Mon Jan  2 10:00:00 2023\n${t}\n`).join('');
  fs.writeFileSync(path.join(bob, 'Junk'), mbox([spamText(300), spamText(301)]));
  fs.writeFileSync(path.join(bob, 'Lists'), mbox([hamText(302)]));
  return root;
}

test('a Dovecot store: Junk is spam, keywords win over folders, Trash/Sent left out, encrypted mail skipped, copies merged', () => {
  const root = dovecotTree();
  const skipped = new Set<string>();
  const mail = [...mailStoreMail(root, skipped)];
  // mbox folders come back with \n line ends.
  const same = (raw: Uint8Array, text: string) =>
    Buffer.from(raw).toString('latin1').replace(/\r/g, '').trim() === text.replace(/\r/g, '').trim();
  const label = (text: string) => mail.find((m) => same(m.raw, text))?.label;
  assert.equal(label(hamText(0)), 'ham');
  assert.equal(label(spamText(0)), 'spam');
  assert.equal(label(spamText(100)), 'spam', '$Junk keyword in INBOX');
  assert.equal(label(hamText(200)), 'ham', 'NonJunk keyword in Junk: the user said not spam');
  assert.equal(label(spamText(301)), 'spam', 'mbox Junk folder');
  assert.equal(label(hamText(302)), 'ham', 'mbox folder');
  assert.equal(label(spamText(400)), undefined, 'Trash left out');
  assert.deepEqual([...skipped].sort(), [
    path.join('alice', 'Maildir', '.Sent'),
    path.join('alice', 'Maildir', '.Trash'),
  ]);

  const summary = { read: 0, encrypted: 0, duplicates: 0, skippedFolders: [] };
  const examples = storeExamples(mail, 0.25, summary);
  assert.equal(summary.encrypted, 1);
  assert.equal(summary.duplicates, 1, 'the campaign alice and bob both got counts once');
  assert.equal(examples.length, mail.length - 2);
  const test = examples.filter((e) => e.split === 'test');
  assert.equal(test.length, Math.round(examples.length * 0.25));
  const times = new Map(mail.map((m) => [m.id, m.time]));
  const newestTrain = Math.max(...examples.filter((e) => e.split === 'train').map((e) => times.get(e.id)!));
  assert.ok(
    test.every((e) => times.get(e.id)! >= newestTrain),
    'the held-out part is the newest mail',
  );
});

test('provider-server’s store: its messages labelled by the folder its users moved them to; train from it', async () => {
  const dir = tempDir('pmf-pmfstore-');
  const file = path.join(dir, 'store.db');
  const store = openSqliteStore(file);
  const { userId } = await store.addUser('carol');
  for (let i = 0; i < 10; i++) {
    await store.deliver(userId, `h${i}`, hamText(i));
    await store.deliver(userId, `s${i}`, spamText(i));
    await store.moveMessage(userId, `s${i}`, 'junk');
  }
  await store.moveMessage(userId, 's0', 'inbox'); // "Not spam: move to Inbox"
  await store.close();
  const mail = [...providerStoreMail(file)];
  assert.equal(mail.length, 20);
  assert.equal(mail.find((m) => m.id === 'carol/s1')?.label, 'spam');
  assert.equal(mail.find((m) => m.id === 'carol/s0')?.label, 'ham');

  const out = path.join(dir, 'spam.pmfm');
  await run(['train', '--task', 'spam', '--algorithm', 'lr', '--N', '4096', '--pmf-store', file,
    '--mailstore', dovecotTree(), '--out', out]); // prettier-ignore
  const model = loadPlainModel(new Uint8Array(fs.readFileSync(out)));
  assert.equal(model.header.labels[1], 'spam');
  assert.ok(
    (model.header.thresholdChoice as { targetFpr: number }).targetFpr === 0.001,
    'threshold chosen and recorded',
  );
});
