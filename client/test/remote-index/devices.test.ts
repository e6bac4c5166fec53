// Several devices on one account (docs/remote-search.md#several-devices): the
// first stores the search key wrapped by the user's OpenPGP key, the others
// unwrap it; two devices indexing disjoint and overlapping mail at the same
// time lose nothing and duplicate nothing (each update names the version it
// was built on; the loser of a race syncs and builds again; the provider
// refuses a message it holds), and every device then finds everything.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SIZE_CLASSES, sizeClass } from '../../../protocol/remote-search.js';
import { makeParty, type Party } from '../../../extension/test/mail-fixtures.js';
import { documentKeywords } from '../../core/remote-index/keywords.js';
import { RemoteIndex } from '../../core/remote-index/remote-index.js';
import type { IndexDoc } from '../../core/remote-index/update.js';
import { startIndexServer, type IndexServer } from './fixture.js';

let server: IndexServer;
let alice: Party;
let account: { userId: number; token: string };
const WORDS = ['atlas', 'borealis', 'cobalt', 'delta', 'ember', 'fjord', 'glacier', 'harbor', 'iris', 'juniper'];

function mail(i: number): IndexDoc {
  // Message i has the words whose bit is set in i (and its own word), so each word is in about half.
  const words = WORDS.filter((_, b) => (i >> b) & 1);
  const body = `${words.join(' ')} unique${i}x`;
  return {
    deliveryId: `pmf-${i.toString(16).padStart(32, '0')}`,
    date: 1_750_000_000_000 + i * 60_000,
    url: `https://mail.example/m/${i}`,
    subject: `Message ${i}`,
    from: 'Carol <carol@example.org>',
    keywords: documentKeywords({ subject: '', from: '', body }),
  };
}

before(async () => {
  // A small compaction threshold: both devices compact during the race as well.
  server = await startIndexServer({ limits: { compactAfterBytes: 4096 } });
  account = await server.user('alice');
  alice = await makeParty('Alice', 'alice@example.org');
});
after(() => server.close());

const open = (token = account.token) =>
  RemoteIndex.open({ baseUrl: server.url, token, fetch: server.fetch, privateKeys: [alice.privateKey] });

test('two devices index disjoint and overlapping mail at once; every device then finds everything once', async () => {
  // Both open at once: one stores its search key, the other unwraps that one.
  const [a, b] = await Promise.all([open(), open(await server.store.issueToken(account.userId))]);
  const mails = Array.from({ length: 400 }, (_, i) => mail(i));
  const chunks = (from: number, to: number, size: number) =>
    Array.from({ length: Math.ceil((to - from) / size) }, (_, k) =>
      mails.slice(from + k * size, Math.min(to, from + (k + 1) * size)),
    );
  // A: 0..249, B: 150..399 (150..249 by both), in small batches so the commits interleave.
  const run = async (dev: RemoteIndex, parts: IndexDoc[][]) => {
    let added = 0;
    for (const p of parts) added += (await dev.add(p)).added;
    return added;
  };
  const [addedA, addedB] = await Promise.all([run(a, chunks(0, 250, 7)), run(b, chunks(150, 400, 9))]);
  assert.equal(addedA + addedB, 400, 'each message added by exactly one device');

  const refused = server.statuses.get('/remote-index/update')!.filter((s) => s === 409).length;
  assert.ok(refused > 0, 'the devices raced: some updates lost and were built again');
  const [{ docs, entries }] = await server.store
    .sql()
    .all<{ docs: number; entries: number }>(
      'SELECT COUNT(*) AS docs, (SELECT COUNT(*) FROM ri_entries) AS entries FROM ri_docs',
      [],
    );
  assert.equal(Number(docs), 400, 'the provider holds each message once');
  assert.equal(
    Number(entries),
    mails.reduce((s, m) => s + SIZE_CLASSES[sizeClass(m.keywords.length)], 0),
    'and each message’s entries once',
  );

  const c = await open(await server.store.issueToken(account.userId));
  for (const [b1, b2] of [
    [0, 1],
    [3, 7],
    [5, 5],
    [9, 2],
  ]) {
    const query = [...new Set([WORDS[b1], WORDS[b2]])].join(' ');
    const want = mails
      .map((m, i) => ({ m, i }))
      .filter(({ i }) => (i >> b1) & 1 && (i >> b2) & 1)
      .map(({ m }) => m.deliveryId)
      .reverse(); // newest first
    for (const dev of [a, b, c]) {
      const got = await dev.search(query, 1000);
      assert.deepEqual(
        got.hits.map((h) => h.deliveryId),
        want,
        query,
      );
    }
  }
  for (const i of [0, 149, 150, 249, 250, 399])
    assert.deepEqual(
      (await c.search(`unique${i}x`)).hits.map((h) => h.subject),
      [`Message ${i}`],
    );
});

test('a device adds nothing that another device indexed (it asks first); the provider refuses it anyway', async () => {
  const a = await open();
  const before = server.seen.get('/remote-index/update')?.length ?? 0;
  assert.deepEqual(await a.add([mail(7), mail(8)]), { added: 0, skipped: 2 });
  assert.equal(server.seen.get('/remote-index/update')?.length ?? 0, before, 'nothing was sent');
});
