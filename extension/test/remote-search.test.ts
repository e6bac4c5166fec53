// The background's search of all mail (extension/remote-search/remote-search.ts)
// against provider-server's remote index: decrypted messages offered as the
// background indexes them go to the provider in batches, under the provider's
// delivery id and with their link; the page's "All mail" answer lists them;
// the setting turns it off; deleting removes the index; locked or not
// connected, it says so in plain words.
import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type * as openpgp from 'openpgp';
import { startIndexServer, type IndexServer } from '../../client/test/remote-index/fixture.js';
import { decodeState, encodeState } from '../../protocol/remote-search.js';
import type { MailSource } from '../lib/messages.js';
import type { ProviderConfig } from '../private/account.js';
import { REMOTE_SEARCH_MESSAGE } from '../remote-search/messages.js';
import { RemoteSearch } from '../remote-search/remote-search.js';
import { makeParty, type Party } from './mail-fixtures.js';

let server: IndexServer;
let alice: Party;
let provider: ProviderConfig | undefined;
let keys: openpgp.PrivateKey[];
let n = 0;

before(async () => {
  server = await startIndexServer();
  alice = await makeParty('Alice', 'alice@example.org');
  provider = { url: server.url, token: (await server.user('alice')).token };
  keys = [alice.privateKey];
});
after(() => server.close());

const make = () =>
  new RemoteSearch({
    provider: async () => provider,
    keys: async () => keys,
    dbName: `remote-search-${++n}`,
    fetch: server.fetch,
  });

/** A message of the provider's demo webmail, as its adapter describes it. */
const source = (id: string, subject: string): MailSource => ({
  id: `${server.url}/mail#${id}`,
  url: `${server.url}/mail/m/${id}`,
  from: 'Bob <bob@example.org>',
  subject,
  date: '2026-11-21T10:00:00Z',
});

const ask = (r: RemoteSearch, query: string) => r.answer({ type: REMOTE_SEARCH_MESSAGE, query });

test('decrypted mail goes to the provider in the background; All mail finds it by a word of its body', async () => {
  const r = make();
  r.offer(source('pgpmime-1', 'Pangolin budget'), 'The pangolin budget for 2027 is approved.');
  r.offer(source('archive-1', 'Archive'), 'The walrus archive is ready.');
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(server.seen.get('/remote-index/update')?.length ?? 0, 0, 'batched, not sent one by one');
  await r.flush();
  const answer = await ask(r, 'walrus');
  assert.ok(answer.ok, JSON.stringify(answer));
  assert.equal(answer.total, 1);
  assert.deepEqual(
    answer.hits.map((h) => [h.id, h.subject, h.url, h.snippet]),
    [['archive-1', 'Archive', `${server.url}/mail/m/archive-1`, '']],
  );
  // Another device with the same key (and token) finds it too.
  const other = make();
  const found = await ask(other, 'pangolin budget');
  assert.ok(found.ok && found.hits[0].id === 'pgpmime-1');
});

test('turned off, nothing is sent and All mail says so; locked or not connected, the answer says what to do', async () => {
  const r = make();
  await r.setEnabled(false);
  const before = server.seen.get('/remote-index/update')?.length ?? 0;
  r.offer(source('secret-1', 'Secret'), 'nothing about this leaves');
  await r.flush();
  assert.equal(server.seen.get('/remote-index/update')?.length ?? 0, before);
  assert.deepEqual(await ask(r, 'secret').then((a) => !a.ok && a.code), 'off');
  await r.setEnabled(true);
  keys = [];
  assert.deepEqual(await ask(r, 'walrus').then((a) => !a.ok && a.code), 'locked');
  keys = [alice.privateKey];
  const saved = provider;
  provider = undefined;
  assert.deepEqual(await ask(r, 'walrus').then((a) => !a.ok && a.code), 'not-connected');
  provider = saved;
  const query = await ask(r, 'laun*');
  assert.ok(!query.ok && query.code === 'query' && /whole words/.test(query.error));
});

test('after a restart, an index older than the one seen before is refused as a rollback', async () => {
  const dbName = `remote-search-${++n}`;
  const before = new RemoteSearch({ provider: async () => provider, keys: async () => keys, dbName });
  before.offer(source('later-1', 'Later'), 'a later message about walrus');
  await before.flush();
  assert.ok((await ask(before, 'walrus')).ok);
  // The background restarts; the provider now answers as it did before that update.
  const older: typeof fetch = async (input, init) => {
    const res = await fetch(input, init);
    if (!new URL(String(input)).pathname.endsWith('/state')) return res;
    const s = decodeState(new Uint8Array(await res.arrayBuffer()));
    return new Response(
      encodeState({ ...s, version: s.version - 1, deltas: s.deltas.slice(0, -1) }) as unknown as ArrayBuffer,
    );
  };
  const after = new RemoteSearch({ provider: async () => provider, keys: async () => keys, dbName, fetch: older });
  const answer = await ask(after, 'walrus');
  assert.ok(!answer.ok && answer.code === 'integrity', JSON.stringify(answer));
});

test('mail deleted in Thunderbird leaves the index at the provider; mail deleted before it was sent is never sent', async () => {
  const r = make();
  const tb = (mid: string, subject: string): MailSource => ({
    id: `thunderbird:${mid}`,
    url: `mid:${mid}`,
    from: 'Bob <bob@example.org>',
    subject,
    date: '2026-11-22T10:00:00Z',
  });
  r.offer(tb('kept@example.org', 'Kept'), 'the okapi report, kept');
  r.offer(tb('gone@example.org', 'Gone'), 'the okapi report, deleted');
  await r.flush();
  const sent = server.seen.get('/remote-index/update')?.length ?? 0;
  assert.deepEqual(await ask(r, 'okapi').then((a) => a.ok && a.hits.map((h) => h.id).sort()), [
    'thunderbird:gone@example.org',
    'thunderbird:kept@example.org',
  ]);
  r.offer(tb('never@example.org', 'Never'), 'the okapi draft');
  await r.forget(['thunderbird:gone@example.org', 'thunderbird:never@example.org']);
  assert.deepEqual(await ask(r, 'okapi').then((a) => a.ok && a.hits.map((h) => h.id)), [
    'thunderbird:kept@example.org',
  ]);
  assert.equal(
    server.seen.get('/remote-index/update')?.length ?? 0,
    sent,
    'the message deleted while waiting was dropped',
  );
});

test('a removal the provider did not take is kept and made before the next update, even across a restart', async () => {
  let down = false;
  const flaky: typeof fetch = async (input, init) => {
    if (down) throw new TypeError('fetch failed');
    return server.fetch(input, init);
  };
  const dbName = `remote-search-${++n}`;
  const open = () => new RemoteSearch({ provider: async () => provider, keys: async () => keys, dbName, fetch: flaky });
  const r = open();
  const tb = (mid: string, body: string): [MailSource, string] => [
    {
      id: `thunderbird:${mid}`,
      url: `mid:${mid}`,
      from: 'Bob <bob@example.org>',
      subject: mid,
      date: '2026-11-23T10:00:00Z',
    },
    body,
  ];
  r.offer(...tb('quoll-1@example.org', 'the quoll census'));
  r.offer(...tb('quoll-2@example.org', 'the quoll census, second part'));
  await r.flush();
  const ids = async (s: RemoteSearch) => ((a) => a.ok && a.hits.map((h) => h.id).sort())(await ask(s, 'quoll'));
  assert.deepEqual(await ids(r), ['thunderbird:quoll-1@example.org', 'thunderbird:quoll-2@example.org']);
  down = true;
  await r.forget(['thunderbird:quoll-1@example.org']);
  assert.ok((await r.status()).lastError, 'the failure shows');
  down = false;
  const restarted = open();
  // Delivered again after its deletion: removed first, then added, so it is found.
  restarted.offer(...tb('quoll-1@example.org', 'the quoll census'));
  const before = server.seen.get('/remote-index/delete')?.length ?? 0;
  await restarted.flush();
  assert.equal(server.seen.get('/remote-index/delete')?.length ?? 0, before + 1, 'the kept removal was sent');
  assert.deepEqual(await ids(restarted), ['thunderbird:quoll-1@example.org', 'thunderbird:quoll-2@example.org']);
  restarted.offer(...tb('quoll-3@example.org', 'the quoll census, third part'));
  await restarted.flush();
  assert.equal(server.seen.get('/remote-index/delete')?.length ?? 0, before + 1, 'and only once');
});

test('deleting the index at the provider leaves nothing there', async () => {
  const r = make();
  assert.ok((await ask(r, 'walrus')).ok);
  const status = await r.settingsAnswer({ type: 'pmf-remote-search-settings', deleteRemote: true });
  assert.ok(status.ok);
  const [{ c }] = await server.store.sql().all<{ c: number }>('SELECT COUNT(*) AS c FROM ri_docs', []);
  assert.equal(Number(c), 0);
  const after = await ask(r, 'walrus');
  assert.ok(after.ok && after.total === 0);
});
