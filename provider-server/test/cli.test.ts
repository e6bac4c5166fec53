// provider-server's admin CLI: deliver registers message files, mbox and
// JSON-lines (gzip too) under the ids the client asks about.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { main } from '../src/cli.js';
import { openStore } from '../src/provider.js';
import { tempDir } from '../../scripts/test/temp-dir.js';

const msg = (id: string, body: string) => `Message-ID: <${id}>\nSubject: ${body}\n\n${body}\n`;

test('deliver takes message files, mbox and JSON-lines, gzip-compressed or not', async (t) => {
  const dir = tempDir('pmf-deliver-');
  process.env.PMF_DATA_DIR = path.join(dir, 'data');
  t.mock.method(console, 'log', () => {});
  assert.equal(await main(['add-user', 'alice']), 0);

  const file = (name: string, text: string) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, name.endsWith('.gz') ? zlib.gzipSync(text) : text);
    return p;
  };
  const mbox = [msg('m1@x', 'one'), msg('m2@x', 'two\n>From escaped')]
    .map((m) => `From a@x Mon Jan  1 00:00:00 2024\n${m}\n`)
    .join('');
  const jsonl = [
    JSON.stringify({ id: 'given-id', raw: msg('ignored@x', 'three') }),
    '',
    JSON.stringify({ text: msg('j4@x', 'four') }),
    JSON.stringify({ text: 'Subject: no id\n\nfive' }),
  ].join('\n');
  const files = [
    file('single.eml', msg('e1@x', 'file')),
    file('no-id.eml', 'Subject: none\n\nbody'),
    file('box.mbox', mbox),
    file('box2.mbox.gz', msg('g1@x', 'gzip').replace(/^/, 'From a@x Mon Jan  1 00:00:00 2024\n')),
    file('list.jsonl', jsonl),
    file('list2.jsonl.gz', JSON.stringify({ raw: msg('jg@x', 'gz') })),
  ];
  assert.equal(await main(['deliver', 'alice', ...files]), 0);

  const store = await openStore({ dataDir: process.env.PMF_DATA_DIR! });
  try {
    const user = (await store.userId('alice'))!;
    const ids = (await store.listMessages(user)).map((m) => m.id);
    assert.deepEqual(
      ids.sort(),
      ['e1@x', 'no-id.eml', 'm1@x', 'm2@x', 'g1@x', 'given-id', 'j4@x', 'list.jsonl:4', 'jg@x'].sort(),
    );
    assert.match((await store.getMessage(user, 'm2@x'))!.raw!, /^two\nFrom escaped$/m);
    assert.equal((await store.getMessage(user, 'list.jsonl:4'))!.raw, 'Subject: no id\n\nfive');
  } finally {
    await store.close();
  }

  await assert.rejects(
    main(['deliver', 'alice', file('bad.jsonl', '{"id":"x"}')]),
    /bad.jsonl:1: needs a "raw" or "text"/,
  );
});
