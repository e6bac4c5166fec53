// The CLI's index and search against provider-server's remote index: a
// mailbox of encrypted mail indexed once (a second run sends nothing), then
// searched by a word of an encrypted body, as another device would with
// only the key; with --mailbox the matching message is decrypted to show a
// line; --delete removes the index.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { makeParty, pgpMimeMessage, type Party } from '../../extension/test/mail-fixtures.js';
import { tempDir } from '../../scripts/test/temp-dir.js';
import { startIndexServer, type IndexServer } from './remote-index/fixture.js';
import { runCli } from './run-cli.js';

let server: IndexServer;
let alice: Party;
let args: string[];
let mailbox: string;

const MAIL = [
  ['pmf-00000000000000000000000000000001', 'Pangolin budget', 'The pangolin budget for 2027 is approved.'],
  ['pmf-00000000000000000000000000000002', 'Lunch', 'Walrus tacos on Friday?'],
  ['pmf-00000000000000000000000000000003', 'Archive', 'The walrus archive is ready.'],
];

before(async () => {
  server = await startIndexServer();
  const { token } = await server.user('alice');
  alice = await makeParty('Alice', 'alice@example.org');
  const bob = await makeParty('Bob', 'bob@example.org');
  const dir = tempDir('pmf-cli-search-');
  fs.writeFileSync(path.join(dir, 'alice.asc'), alice.privateArmored);
  mailbox = path.join(dir, 'mail.jsonl');
  const lines: string[] = [];
  for (const [id, subject, body] of MAIL)
    lines.push(JSON.stringify({ id, raw: await pgpMimeMessage(bob, alice, subject, body) }));
  fs.writeFileSync(mailbox, lines.join('\n'));
  args = [
    '--server',
    server.url,
    '--token',
    token,
    '--key',
    path.join(dir, 'alice.asc'),
    '--passphrase',
    alice.passphrase,
  ];
});
after(() => server.close());

test('index once, then search a word of an encrypted body from the whole mailbox', async () => {
  assert.match((await runCli(['index', ...args, mailbox])).join('\n'), /^indexed 3 messages \(0 already indexed\)/);
  assert.match((await runCli(['index', ...args, mailbox])).join('\n'), /^indexed 0 messages \(3 already indexed\)/);
  const out = await runCli(['search', ...args, 'walrus']);
  assert.equal(out[0], '2 messages match');
  // Newest first: the two were written within a second of each other, so either order.
  assert.deepEqual(
    out
      .slice(1)
      .map((l) => l.split(/\s{2,}/).slice(-2))
      .sort(),
    [
      ['Archive', MAIL[2][0]],
      ['Lunch', MAIL[1][0]],
    ],
  );
  const both = await runCli(['search', ...args, '--mailbox', mailbox, 'pangolin', 'budget']);
  assert.equal(both[0], '1 message matches');
  assert.match(both[1], /Pangolin budget/);
  assert.equal(both[2], '    The pangolin budget for 2027 is approved.');
  const without = await runCli(['search', ...args, '--', 'walrus', '-tacos']);
  assert.deepEqual(without.slice(0, 1), ['1 message matches']);
});

test('index --delete removes the account’s index; search then finds nothing', async () => {
  assert.match((await runCli(['index', ...args, '--delete'])).join('\n'), /deleted/);
  assert.equal((await runCli(['search', ...args, 'walrus']))[0], '0 messages match');
});
