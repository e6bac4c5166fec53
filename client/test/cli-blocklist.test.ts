// classify --task blocklist against a real provider: the message with a listed
// link is reported with the provider's record, the clean one is not, and a
// second run is refused per message (one lookup per delivered message id).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { BlocklistCatalog } from '../../provider-server/src/blocklist.js';
import { startRealProvider, type RealProvider } from '../../provider-server/test/real-provider.js';
import { runCli } from './run-cli.js';

let dir: string;
let provider: RealProvider;
let token: string;

const MAIL = {
  'bl-1@test':
    'From: bank@evil.example\nSubject: verify\nMessage-ID: <bl-1@test>\n\nLog in at https://login.evil.example/verify now.\n',
  'bl-2@test':
    'From: friend@good.example\nSubject: lunch\nMessage-ID: <bl-2@test>\n\nSee https://www.good.example/menu\n',
};

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-cli-bl-'));
  const dataDir = path.join(dir, 'data');
  await BlocklistCatalog.publish(dataDir, 'phishing', 'domain\tevil.example\tphishing\t90\t2026-11-02\n');
  provider = await startRealProvider({ overrides: { dataDir } });
  const { userId, token: t } = await provider.store.addUser('bl');
  for (const [id, raw] of Object.entries(MAIL)) await provider.store.deliver(userId, id, raw);
  token = t;
  fs.writeFileSync(
    path.join(dir, 'in.jsonl'),
    Object.values(MAIL)
      .map((raw) => JSON.stringify({ raw }))
      .join('\n'),
  );
});
after(async () => {
  await provider.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

test('classify --task blocklist shows the hit with its record, and each message is looked up once', async () => {
  const args = ['classify', '--server', provider.server.httpUrl, '--token', token, '--task', 'blocklist'];
  const cache = ['--cache', path.join(dir, 'cache')];
  const out = await runCli([...args, ...cache, path.join(dir, 'in.jsonl')]);
  const row = (id: string) => out.find((l) => l.startsWith(id)) ?? '';
  assert.match(row('bl-1@test'), /blocklisted/);
  assert.ok(
    out.includes("    evil.example is on the provider's phishing list since 2026-11-02 (score 90)"),
    out.join('\n'),
  );
  assert.match(row('bl-2@test'), /not-listed/);
  assert.equal(out.filter((l) => l.includes('is on the provider')).length, 1);
  const again = await runCli([...args, ...cache, path.join(dir, 'in.jsonl')]);
  assert.match(again.find((l) => l.startsWith('bl-1@test')) ?? '', /already-classified/);
});
