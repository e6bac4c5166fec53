// What a malicious provider can try against a device (docs/remote-search.md#malicious-provider),
// each as a tampering fetch between the real client and the real provider:
// hand it a search key of its own choosing, roll the state back, skip or
// replay a delta, swap records between results, alter a result's date.
// Each must be refused with a clear error, never silently accepted.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import * as openpgp from 'openpgp';
import { decodeSearchAnswer, decodeState, encodeSearchAnswer, encodeState } from '../../../protocol/remote-search.js';
import { makeParty, type Party } from '../../../extension/test/mail-fixtures.js';
import { RemoteIndexApi } from '../../core/remote-index/api.js';
import { RemoteIndexIntegrityError } from '../../core/remote-index/keys.js';
import { documentKeywords } from '../../core/remote-index/keywords.js';
import { RemoteIndex } from '../../core/remote-index/remote-index.js';
import { RemoteIndexRollbackError } from '../../core/remote-index/state.js';
import type { IndexDoc } from '../../core/remote-index/update.js';
import { SearchKeyError, unwrapSearchKey, wrapSearchKey } from '../../core/remote-index/wrap.js';
import { startIndexServer, type IndexServer } from './fixture.js';

let server: IndexServer;
let alice: Party;
let mallory: Party;

const mail = (i: number, body: string): IndexDoc => ({
  deliveryId: `id-${i}`,
  date: 1_760_000_000_000 + i * 1000,
  url: '',
  subject: `s${i}`,
  from: '',
  keywords: documentKeywords({ subject: '', from: '', body }),
});

/** A fetch that lets `tamper` rewrite the answer body of the matching path. */
function tampering(path: string, tamper: (body: Uint8Array) => Uint8Array): typeof fetch {
  return async (input, init) => {
    const res = await fetch(input, init);
    const url = new URL(String(input));
    if (url.pathname !== `/remote-index${path}` || !res.ok) return res;
    const out = tamper(new Uint8Array(await res.arrayBuffer()));
    return new Response(out as unknown as ArrayBuffer, { status: 200 });
  };
}

before(async () => {
  server = await startIndexServer();
  [alice, mallory] = await Promise.all([
    makeParty('Alice', 'alice@example.org'),
    makeParty('Mallory', 'm@evil.example'),
  ]);
});
after(() => server.close());

test('a wrapped key the user’s keys did not sign is refused (the provider cannot pick the search key)', async () => {
  const { token, userId } = await server.user('forged');
  const chosen = new Uint8Array(32).fill(7);
  // Encrypted to Alice's public key, as anyone can, signed by the provider's own key or by nobody.
  const signedByMallory = await openpgp.encrypt({
    message: await openpgp.createMessage({ binary: chosen }),
    encryptionKeys: alice.publicKey,
    signingKeys: mallory.privateKey,
    format: 'binary',
  });
  const unsigned = await openpgp.encrypt({
    message: await openpgp.createMessage({ binary: chosen }),
    encryptionKeys: alice.publicKey,
    format: 'binary',
  });
  for (const forged of [signedByMallory, unsigned]) {
    await server.store.sql().run('DELETE FROM ri_accounts WHERE user_id = ?', [userId]);
    assert.equal(await new RemoteIndexApi({ baseUrl: server.url, token }).putKey(forged), 'created');
    await assert.rejects(
      RemoteIndex.open({ baseUrl: server.url, token, privateKeys: [alice.privateKey] }),
      SearchKeyError,
    );
  }
  // Her own wrapping opens; Mallory's keys do not open hers.
  const wrapped = await wrapSearchKey(chosen, [alice.privateKey]);
  assert.deepEqual(await unwrapSearchKey(wrapped, [alice.privateKey]), chosen);
  await assert.rejects(unwrapSearchKey(wrapped, [mallory.privateKey]), SearchKeyError);
});

test('rollback, skipped and replayed deltas, swapped records and altered dates are refused', async () => {
  const { token } = await server.user('alice');
  let through: typeof fetch = fetch;
  const honest = await RemoteIndex.open({
    baseUrl: server.url,
    token,
    fetch: (input, init) => through(input, init),
    privateKeys: [alice.privateKey],
  });
  await honest.add([mail(1, 'pangolin budget'), mail(2, 'pangolin walrus')]);
  await honest.add([mail(3, 'walrus archive')]);
  assert.equal(honest.counters.version, 2);

  // Rolled back: the provider answers version 1 to a device that saw 2.
  through = tampering('/state', (b) => encodeState({ ...decodeState(b), version: 1, deltas: [] }));
  await assert.rejects(honest.search('walrus'), RemoteIndexRollbackError);

  const device = (f: typeof fetch) =>
    RemoteIndex.open({ baseUrl: server.url, token, fetch: f, privateKeys: [alice.privateKey] });
  // A delta skipped, or one delta given again under the next version.
  const skipped = await device(
    tampering('/state', (b) => encodeState({ ...decodeState(b), deltas: decodeState(b).deltas.slice(1) })),
  );
  await assert.rejects(skipped.search('walrus'), RemoteIndexIntegrityError);
  const replayed = await device(
    tampering('/state', (b) => {
      const s = decodeState(b);
      return encodeState({ ...s, deltas: [s.deltas[0], { ...s.deltas[0], version: 2 }] });
    }),
  );
  await assert.rejects(replayed.search('walrus'), RemoteIndexIntegrityError);

  // Two results' records swapped: each is sealed with its own tag.
  const swapped = await device(
    tampering('/records', (b) => Uint8Array.from([...b.subarray(b.length / 2), ...b.subarray(0, b.length / 2)])),
  );
  await assert.rejects(swapped.search('pangolin'), RemoteIndexIntegrityError);

  // A result's sort key altered: its date no longer matches the sealed record.
  const redated = await device(
    tampering('/search', (b) => {
      // Each of its documents has one hit (one address): 24 bytes of document, 4 of its check.
      const answer = decodeSearchAnswer(b, (b.length - 4 - 28 * new DataView(b.buffer, b.byteOffset).getUint32(0)) / 4);
      answer.docs[0].sort = answer.docs[0].sort.map((x, i) => (i === 7 ? x ^ 1 : x));
      return encodeSearchAnswer(answer);
    }),
  );
  await assert.rejects(redated.search('pangolin'), RemoteIndexIntegrityError);

  // An endless answer is cut off at the client's bound, not buffered.
  let sent = 0;
  const endless = await device(async (input, init) =>
    new URL(String(input)).pathname.endsWith('/state')
      ? new Response(
          new ReadableStream({
            pull(c) {
              sent += 1 << 20;
              c.enqueue(new Uint8Array(1 << 20));
            },
          }),
        )
      : fetch(input, init),
  );
  await assert.rejects(endless.search('walrus'), /exceeds/);
  assert.ok(sent <= 66 << 20, `${sent} bytes were produced`);

  // Untouched, the same device finds both.
  const fine = await device(fetch);
  assert.deepEqual(
    (await fine.search('pangolin')).hits.map((h) => h.deliveryId),
    ['id-2', 'id-1'],
  );
});

test('a result named under another message’s entry, or an entry replayed from another search, is refused', async () => {
  const { token } = await server.user('forger');
  let through: typeof fetch = fetch;
  const device = await RemoteIndex.open({
    baseUrl: server.url,
    token,
    fetch: (input, init) => through(input, init),
    privateKeys: [alice.privateKey],
  });
  await device.add([mail(1, 'pangolin budget'), mail(2, 'pangolin walrus'), mail(3, 'walrus archive')]);
  // What the provider answered to a search for "archive": message 3 and the check of its entry.
  let archive: ReturnType<typeof decodeSearchAnswer> | undefined;
  through = async (input, init) => {
    const res = await fetch(input, init);
    if (new URL(String(input)).pathname !== '/remote-index/search') return res;
    const body = new Uint8Array(await res.arrayBuffer());
    archive = decodeSearchAnswer(body, (init?.body as Uint8Array).length / 16);
    return new Response(body as unknown as ArrayBuffer, { status: res.status });
  };
  assert.deepEqual(
    (await device.search('archive')).hits.map((h) => h.deliveryId),
    ['id-3'],
  );
  const m3 = archive!.docs[0];
  const check3 = archive!.checks[archive!.hits.findIndex((h) => h !== 0)];

  // "budget" finds message 1; the provider names message 3 under message 1's entry instead.
  through = tampering('/search', (b) => {
    const a = decodeSearchAnswer(b, (b.length - 4 - 24 - 4) / 4);
    return encodeSearchAnswer({ ...a, docs: [m3] });
  });
  await assert.rejects(device.search('budget'), RemoteIndexIntegrityError);
  // Or answers every address with message 3's entry from the "archive" search.
  through = tampering('/search', (b) => {
    const a = decodeSearchAnswer(b, (b.length - 4 - 24 - 4) / 4);
    return encodeSearchAnswer({ docs: [m3], hits: a.hits.map(() => 1), checks: a.hits.map(() => check3) });
  });
  await assert.rejects(device.search('budget'), RemoteIndexIntegrityError);

  through = fetch;
  assert.deepEqual(
    (await device.search('budget')).hits.map((h) => h.deliveryId),
    ['id-1'],
  );
});
