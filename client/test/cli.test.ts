import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import * as openpgp from 'openpgp';
import { loadSpamAssassin } from '../../models/data/loaders.js';
import { startRealProvider, type RealProvider } from '../../provider-server/test/real-provider.js';
import { runCli } from './run-cli.js';
import { main } from '../node/cli.js';
import { detectFormat, readMailbox } from '../../models/data/mailbox.js';
import { PackageLogAlert } from '../core/package-log.js';

let dir: string;
let provider: RealProvider;
const encrypted: string[] = [];
const truth: string[] = [];

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-cli-'));
  provider = await startRealProvider();
  const { privateKey, publicKey } = await openpgp.generateKey({
    type: 'curve25519',
    userIDs: [{ email: 'cli@test.invalid' }],
    passphrase: 'pw',
    format: 'object',
  });
  fs.writeFileSync(path.join(dir, 'key.asc'), privateKey.armor());
  const test = loadSpamAssassin().filter((e) => e.split === 'test');
  for (const [i, e] of [
    test.find((x) => x.label === 'spam')!,
    ...test.filter((x) => x.label === 'ham').slice(0, 2),
  ].entries()) {
    const armored = await openpgp.encrypt({
      message: await openpgp.createMessage({ text: e.raw as string }),
      encryptionKeys: publicKey,
    });
    encrypted.push(`From: a@b\nSubject: ...\nMessage-ID: <cli-${i}@test>\n\n${armored}`); // inline PGP
    truth.push(e.label);
  }
});
after(async () => {
  await provider.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function user(name: string): Promise<string> {
  const { userId, token } = await provider.store.addUser(name);
  for (const [i, m] of encrypted.entries()) await provider.store.deliver(userId, `cli-${i}@test`, m);
  return token;
}

test('mailbox readers: JSON-lines, mbox and Maildir give the same messages and ids', () => {
  const jsonl = path.join(dir, 'in.jsonl');
  fs.writeFileSync(jsonl, encrypted.map((raw) => JSON.stringify({ raw })).join('\n'));
  const mbox = path.join(dir, 'in.mbox');
  fs.writeFileSync(mbox, encrypted.map((m) => `From x@y Mon Jan  1 00:00:00 2024\n${m}\n`).join('\n'));
  const md = path.join(dir, 'Maildir');
  fs.mkdirSync(path.join(md, 'cur'), { recursive: true });
  encrypted.forEach((m, i) => fs.writeFileSync(path.join(md, 'cur', `${i}.host:2,S`), m));
  assert.deepEqual([jsonl, mbox, md].map(detectFormat), ['jsonl', 'mbox', 'maildir']);
  const ids = encrypted.map((_, i) => `cli-${i}@test`);
  for (const p of [jsonl, mbox, md])
    assert.deepEqual(
      readMailbox(p).map((m) => m.id),
      ids,
      p,
    );
  assert.throws(() => readMailbox(path.join(dir, 'bad.jsonl'), 'jsonl'));
  fs.writeFileSync(path.join(dir, 'bad2.jsonl'), '{"nope": 1}\n');
  assert.throws(() => readMailbox(path.join(dir, 'bad2.jsonl')), /needs a "raw" or "text"/);
});

test('the CLI classifies an encrypted mailbox in each format, prints the table and summary, and resumes from its state file', async () => {
  for (const [name, input] of [
    ['jsonl', 'in.jsonl'],
    ['mbox', 'in.mbox'],
    ['maildir', 'Maildir'],
  ]) {
    const token = await user(`u-${name}`);
    const state = path.join(dir, `${name}.state.jsonl`);
    const args = [
      'classify',
      '--server',
      provider.server.httpUrl,
      '--token',
      token,
      '--key',
      path.join(dir, 'key.asc'),
      '--passphrase',
      'pw',
      '--cache',
      path.join(dir, 'cache'),
      '--state',
      state,
      path.join(dir, input),
    ];
    const out = await runCli(args);
    assert.match(out[0], /message id\s+verdict\s+client ms\s+sent B\s+recv B/);
    const rows = out.slice(1, 4);
    rows.forEach((r, i) => {
      assert.ok(r.startsWith(`cli-${i}@test`), r);
      assert.match(r, new RegExp(`\\s${truth[i]}\\s`), `${name}: ${r} (the default model is right on these)`);
      assert.match(r, /\s\d+\.\d\s+\d{4,5}\s+\d{3,4}$/, 'client ms, bytes sent and received');
    });
    assert.match(out.at(-2)!, /^3 messages: /);
    assert.match(out.at(-1)!, /per email \(mean over 3 classified\)/);
    // A rerun resumes: nothing is sent again (the provider would refuse a second classification).
    const again = await runCli(args);
    assert.equal(again.filter((l) => l.endsWith('(recorded)')).length, 3);
    assert.ok(!again.some((l) => /already-classified/.test(l)));
  }
});

test('plain http to a non-loopback provider is refused before anything is sent', async () => {
  await assert.rejects(
    main([
      'classify',
      '--server',
      'http://mail.example.org',
      '--token',
      't',
      '--cache',
      path.join(dir, 'c2'),
      path.join(dir, 'in.jsonl'),
    ]),
    /refusing plain http/,
  );
});

test('the log command prints the entries and the head fingerprint to compare; a forked head alerts', async () => {
  const fp = provider.packageLog.fingerprint;
  const vkey = provider.packageLog.vkey;
  const log = ['log', '--server', provider.server.httpUrl, '--cache', path.join(dir, 'log-cache')];
  const first = await runCli(log);
  assert.match(first[0], new RegExp(`^spam v1  ${provider.catalog.current('spam')!.packageSha256}  `));
  assert.ok(first.at(-1)!.startsWith(`package log ${fp} (key ${vkey}, trusted on first use`), first.at(-1));
  assert.match(first.at(-1)!, /; not witnessed: the witness policy requires no witness/);
  assert.match((await runCli(log)).at(-1)!, /recorded on first use\); not witnessed/);
  assert.match((await runCli([...log, '--log-key', vkey])).at(-1)!, /pinned\); not witnessed/);
  assert.equal((await runCli([...log, '--compare', fp])).at(-1), 'same head as the other device');
  await assert.rejects(
    main([...log, '--compare', `${provider.packageLog.size}:${'0'.repeat(32)}`]),
    (e) => e instanceof PackageLogAlert && e.kind === 'log_forked',
  );
});
