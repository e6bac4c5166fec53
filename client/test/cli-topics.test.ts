// `classify --task topics|both` and the opt-out commands against the real
// provider serving the bundled spam and topic models.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { loadTwentyNews } from '../../models/data/loaders.js';
import { startRealProvider, type RealProvider } from '../../provider-server/test/real-provider.js';
import { runCli } from './run-cli.js';

let dir: string;
let provider: RealProvider;
let token: string;
let userId: number;
const ids: string[] = [];
const labels = JSON.parse(fs.readFileSync(path.resolve('models/default/topics.public.json'), 'utf8'))
  .labels as string[];

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-cli-topics-'));
  provider = await startRealProvider({ models: ['spam', 'topics'] });
  ({ userId, token } = await provider.store.addUser('cli-topics'));
  const posts = loadTwentyNews()
    .filter((e) => e.split === 'test')
    .filter((_, i) => i % 2000 === 0);
  const lines: string[] = [];
  for (const [i, e] of posts.entries()) {
    ids.push(`news-${i}@test`);
    await provider.store.deliver(userId, ids[i], `Subject: ...\r\n\r\n(encrypted)`);
    lines.push(JSON.stringify({ id: ids[i], raw: e.raw }));
  }
  fs.writeFileSync(path.join(dir, 'in.jsonl'), lines.join('\n'));
});
after(async () => {
  await provider.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

async function run(args: string[]): Promise<string[]> {
  return runCli(['--server', provider.server.httpUrl, '--token', token, ...args]);
}

test('classify --task both: spam verdicts and topics in one table; the provider records every topic', async () => {
  const cache = path.join(dir, 'cache');
  const state = path.join(dir, 'state.jsonl');
  const args = ['classify', '--task', 'both', '--cache', cache, '--state', state, path.join(dir, 'in.jsonl')];
  const out = await run(args);
  assert.match(out[0], /message id\s+verdict\s+client ms\s+sent B\s+recv B\s+topic \(public model\)/);
  const topicRows = out.filter((l) => /topic-extracted/.test(l));
  assert.equal(topicRows.length, ids.length, out.join('\n'));
  for (const r of topicRows)
    assert.ok(
      labels.some((l) => r.includes(l.slice(0, 20))),
      `a topic name in ${r}`,
    );
  assert.equal(
    out.filter((l) => l.startsWith('news-') && /\s(spam|ham)\s/.test(l)).length,
    ids.length,
    'spam verdicts',
  );
  for (const id of ids) assert.ok((await provider.store.topicOf(userId, id)) !== undefined, id);
  assert.match(out.at(-2)!, new RegExp(`^${ids.length} messages: `));

  // A rerun resumes from the state file: nothing is fed again.
  const again = await run(args);
  assert.equal(again.filter((l) => l.endsWith('(recorded)')).length, 2 * ids.length);
  // Without the state file, the replay log still refuses to feed the same emails again.
  const fresh = await run(['classify', '--task', 'topics', '--cache', cache, path.join(dir, 'in.jsonl')]);
  assert.equal(fresh.filter((l) => l.startsWith('news-') && /replay-refused/.test(l)).length, ids.length);
});

test('topics-opt-out and topics-opt-in are recorded by the provider', async () => {
  const cache = path.join(dir, 'cache-opt');
  await run(['topics-opt-out', '--cache', cache]);
  assert.equal(await provider.store.topicOptOut(userId), true);
  await run(['topics-opt-in', '--cache', cache]);
  assert.equal(await provider.store.topicOptOut(userId), false);
});
