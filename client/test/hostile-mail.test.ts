// Any sender can put one message in a user's mailbox: it must never stop the
// filter for the messages after it. Against a real provider-server, the CLI
// classifies a mailbox where a huge message (the 150,000-word text that once
// overflowed the extractor's stack on every rerun) and one it cannot decrypt
// sit between ordinary mail: every neighbour gets the plaintext model's
// verdict, the huge one is classified too, and the other is recorded failed
// with its reason.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import * as openpgp from 'openpgp';
import { loadSpamAssassin } from '../../models/data/loaders.js';
import { extractFeatures } from '../../models/features/index.js';
import { loadPlainModel, plainVerdict } from '../../models/plain/index.js';
import { BUNDLED_MODELS, startRealProvider, type RealProvider } from '../../provider-server/test/real-provider.js';
import { runCli } from './run-cli.js';

let provider: RealProvider;
const plain = loadPlainModel(new Uint8Array(fs.readFileSync(BUNDLED_MODELS.spam)));
const model = () => plain;

before(async () => {
  provider = await startRealProvider();
});
after(() => provider.close());

test('a huge message and an unreadable one between ordinary mail: both neighbours get their verdicts', async () => {
  const test = loadSpamAssassin().filter((e) => e.split === 'test');
  const [ham1, ham2] = test.filter((e) => e.label === 'ham');
  const [spam1] = test.filter((e) => e.label === 'spam');
  const words = Array.from({ length: 150_000 }, (_, i) => `word${i % 5000}`).join(' ');
  const { publicKey } = await openpgp.generateKey({ userIDs: [{ email: 'other@test.invalid' }], format: 'object' });
  const notForUs = await openpgp.encrypt({
    message: await openpgp.createMessage({ text: 'hi' }),
    encryptionKeys: publicKey,
  });
  const mailbox = [
    { id: 'before', raw: ham1.raw as string },
    { id: 'huge', raw: `From: a@b.example\r\nSubject: long\r\n\r\n${words}\r\n` },
    { id: 'middle', raw: spam1.raw as string },
    { id: 'unreadable', raw: `From: a@b.example\r\nSubject: x\r\n\r\n${notForUs}` },
    { id: 'after', raw: ham2.raw as string },
  ];
  const { userId, token } = await provider.store.addUser('hostile-mail');
  for (const m of mailbox) await provider.store.deliver(userId, m.id, m.raw);
  const file = path.join(provider.dir, 'mailbox.jsonl');
  fs.writeFileSync(file, mailbox.map((m) => JSON.stringify(m)).join('\n'));
  const state = path.join(provider.dir, 'state.jsonl');
  const args = ['classify', '--server', provider.server.httpUrl, '--token', token, '--state', state];
  const out = await runCli([...args, '--cache', path.join(provider.dir, 'cache'), file]);

  const row = (id: string) =>
    out.find((l) => l.startsWith(`${id} `)) ?? assert.fail(`no row for ${id}:\n${out.join('\n')}`);
  for (const m of mailbox.filter((x) => x.id !== 'unreadable')) {
    const expected = plainVerdict(model(), await extractFeatures(m.raw, plain.header.featureSpec));
    assert.match(row(m.id), new RegExp(`^${m.id}\\s+${expected}\\s`), `${m.id}: the plaintext model says ${expected}`);
  }
  assert.match(row('unreadable'), /^unreadable\s+failed\s/);
  const reason = out[out.indexOf(row('unreadable')) + 1];
  assert.match(reason, /^\s+cannot read\/decrypt: /, 'the reason is printed under the row');
  const recorded = fs
    .readFileSync(state, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
  assert.deepEqual(
    recorded.map((r) => r.id),
    mailbox.map((m) => m.id),
    'every message has its outcome recorded, in order',
  );
  assert.match(recorded[3].detail, /cannot read\/decrypt/, 'recorded with its reason');
});
