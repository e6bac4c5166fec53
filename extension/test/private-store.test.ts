// The private functions' IndexedDB (extension/private/store.ts) through
// fake-indexeddb: client/core's resumable download writes into it, a new
// version replaces the old with its key-switching keys, and keys/verdicts
// are per account.
import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { describe, it } from 'node:test';
import { ensurePackage } from '../../client/core/download.js';
import { FloodLedger } from '../../client/core/flood-ledger.js';
import { ReplayLog } from '../../client/core/topic-replay.js';
import { testPackage } from '../../client/test/package-fixture.js';
import { outcomeBadge } from '../private/faults.js';
import { accountOf } from '../private/account.js';
import { PrivateStore } from '../private/store.js';

let n = 0;
const freshStore = () => PrivateStore.open(`private-store-test-${n++}`);
const hex = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

const makePackage = (version: number): Uint8Array =>
  testPackage(
    new Uint8Array(200_000).map((_, i) => (i * 31 + version) & 0xff),
    version,
  ).bytes;

/** A provider serving one package in 50 KB chunks; `cutAfter` chunks then the connection drops. */
function fakeProvider(pkg: Uint8Array, version: number) {
  const etag = `"${hex(pkg)}"`;
  const seen: { range?: string }[] = [];
  let cutAfter = Infinity;
  const fetchFn = (async (input: URL | RequestInfo, init?: RequestInit) => {
    const url = new URL(String(input));
    if (url.pathname === '/models')
      return Response.json({
        models: [{ id: 'spam', version, sha256: hex(pkg), bytes: pkg.length, url: `/models/spam/${version}` }],
      });
    const range = (init?.headers as Record<string, string> | undefined)?.range;
    seen.push({ range });
    const start = range ? Number(/bytes=(\d+)-/.exec(range)![1]) : 0;
    let sent = 0;
    const rest = pkg.subarray(start);
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        if (sent >= cutAfter) return c.error(new TypeError('connection dropped'));
        const chunk = rest.subarray(sent * 50_000, (sent + 1) * 50_000);
        sent++;
        if (chunk.length) c.enqueue(chunk);
        else c.close();
      },
    });
    return new Response(body, { status: range ? 206 : 200, headers: { etag } });
  }) as typeof fetch;
  return { fetchFn, seen, cut: (k: number) => (cutAfter = k) };
}

describe('PrivateStore', () => {
  it('resumes an interrupted download from IndexedDB and opens the stored package without the network', async () => {
    const store = await freshStore();
    const pkg = makePackage(1);
    const p = fakeProvider(pkg, 1);
    p.cut(2);
    const progress: number[] = [];
    await assert.rejects(
      ensurePackage({ baseUrl: 'http://127.0.0.1:1', modelId: 'spam', storage: store.packages, fetch: p.fetchFn }),
      /connection dropped/,
    );
    assert.equal((await store.packages.getPartial('spam-v1'))?.bytes.length, 100_000, 'two chunks kept');
    p.cut(Infinity);
    const got = await ensurePackage({
      baseUrl: 'http://127.0.0.1:1',
      modelId: 'spam',
      storage: store.packages,
      fetch: p.fetchFn,
      onProgress: (r) => progress.push(r),
    });
    assert.equal(p.seen.at(-1)?.range, 'bytes=100000-', 'the second request resumes');
    assert.equal(progress[0], 100_000);
    assert.equal(got.sha256, hex(pkg));
    assert.equal(await store.packages.getPartial('spam-v1'), undefined, 'the partial is dropped once whole');
    const before = p.seen.length;
    await ensurePackage({ baseUrl: 'http://127.0.0.1:1', modelId: 'spam', storage: store.packages, fetch: p.fetchFn });
    assert.equal(p.seen.length, before, 'the package itself is not fetched again');
  });

  it('drops a tampered download and keeps nothing of it', async () => {
    const store = await freshStore();
    const pkg = makePackage(1);
    const bad = pkg.slice();
    bad[bad.length - 1] ^= 1;
    const p = fakeProvider(bad, 1);
    const listing = p.fetchFn;
    const fetchFn = (async (input: URL | RequestInfo, init?: RequestInit) =>
      new URL(String(input)).pathname === '/models'
        ? Response.json({
            models: [{ id: 'spam', version: 1, sha256: hex(pkg), bytes: pkg.length, url: '/models/spam/1' }],
          })
        : listing(input, init)) as typeof fetch;
    await assert.rejects(
      ensurePackage({ baseUrl: 'http://127.0.0.1:1', modelId: 'spam', storage: store.packages, fetch: fetchFn }),
      { name: 'PackageIntegrityError' },
    );
    assert.equal(await store.packages.get('spam-v1'), undefined);
    assert.equal(await store.packages.getPartial('spam-v1'), undefined);
  });

  it('a new model version replaces the old one and its key-switching keys', async () => {
    const store = await freshStore();
    const account = accountOf({ url: 'http://127.0.0.1:8787', token: 't' });
    await store.packages.put('spam-v1', new Uint8Array([1]));
    await store.packages.put('topics-v1', new Uint8Array([9]));
    await store.putUserKey(account, 'spam-v1', { epoch: 1, ksk: new Uint8Array([5]) });
    await store.packages.put('spam-v2', new Uint8Array([2]));
    assert.equal(await store.packages.get('spam-v1'), undefined);
    assert.deepEqual(await store.packages.get('spam-v2'), new Uint8Array([2]));
    assert.deepEqual(await store.packages.get('topics-v1'), new Uint8Array([9]), 'other models are kept');
    assert.equal(await store.userKey(account, 'spam-v1'), undefined);
  });

  it('keeps keys and verdicts per account (provider origin + token), and the provider config', async () => {
    const store = await freshStore();
    const alice = accountOf({ url: 'http://127.0.0.1:8787/', token: 'alice' });
    const bob = accountOf({ url: 'http://127.0.0.1:8787', token: 'bob' });
    assert.notEqual(alice, bob);
    assert.ok(!alice.includes('alice'), 'the token itself is not in the key');
    await store.putUserKey(alice, 'spam-v1', { epoch: 2, ksk: new Uint8Array([7, 7]) });
    assert.deepEqual(await store.userKey(alice, 'spam-v1'), { epoch: 2, ksk: new Uint8Array([7, 7]) });
    assert.equal(await store.userKey(bob, 'spam-v1'), undefined);
    await store.putVerdict(alice, 'm1', { kind: 'verdict', spam: true, at: Date.now() });
    await store.putVerdict(alice, 'm0', { kind: 'already_classified', at: 0 });
    assert.equal(await store.verdict(bob, 'm1'), undefined);
    assert.equal(await store.countVerdictsSince(alice, 1), 1);
    assert.equal(await store.provider(), undefined);
    await store.setProvider({ url: 'http://127.0.0.1:8787', token: 'alice' });
    assert.equal((await store.provider())?.token, 'alice');
    await store.setProvider(undefined);
    assert.equal(await store.provider(), undefined);
  });

  it('a new token starts a fresh account: nothing of the previous one is kept or shown', async () => {
    const store = await freshStore();
    const old = { url: 'http://127.0.0.1:8787', token: 'old-token' };
    const fresh = { url: 'http://127.0.0.1:8787', token: 'new-token' };
    await store.setProvider(old);
    await store.putVerdict(accountOf(old), 'm1', { kind: 'verdict', spam: true, at: Date.now() });
    await store.putUserKey(accountOf(old), 'spam-v1', { epoch: 1, ksk: new Uint8Array([1]) });
    const kept = { messageId: 'm3', lwe: new Uint8Array(1), choices: new Uint8Array(1) };
    await store
      .keptRequests(accountOf(old))
      .put('m3', { request: kept, evaluation: { T: 26, labels: new Uint8Array(416) } });
    assert.deepEqual((await store.keptRequests(accountOf(old)).get('m3'))?.request, kept);
    await store.blindKeys(accountOf(old)).put('m3', new Uint8Array(32).fill(5));
    assert.deepEqual(await store.blindKeys(accountOf(old)).get('m3'), new Uint8Array(32).fill(5));
    await store.setProvider(fresh);
    assert.equal(await store.blindKeys(accountOf(old)).get('m3'), undefined, 'and its blinding keys');
    assert.equal(await store.keptRequests(accountOf(old)).get('m3'), undefined, 'its kept requests too');
    assert.equal(await store.verdict(accountOf(fresh), 'm1'), undefined);
    assert.equal(await store.verdict(accountOf(old), 'm1'), undefined, 'the old verdicts are gone from the device');
    assert.equal(await store.userKey(accountOf(old), 'spam-v1'), undefined);
    await store.putVerdict(accountOf(fresh), 'm2', { kind: 'verdict', spam: false, at: Date.now() });
    await store.setProvider(undefined);
    await store.setProvider(fresh);
    assert.ok(
      await store.verdict(accountOf(fresh), 'm2'),
      'disconnecting and reconnecting one account keeps its verdicts',
    );
  });

  it('drops kept requests and blinding keys left unsettled past their time, and only those', async () => {
    const store = await freshStore();
    const kept = store.keptRequests('acct');
    const request = { messageId: 'old', lwe: new Uint8Array(1), choices: new Uint8Array(1) };
    await kept.put('old', { request, evaluation: { T: 26, labels: new Uint8Array(416) } });
    await store.blindKeys('acct').put('old', new Uint8Array(32).fill(1));
    const storedBy = Date.now();
    assert.equal(await store.dropStaleKept(storedBy - 60_000), 0, 'fresh ones stay');
    assert.deepEqual((await kept.get('old'))?.request, request);
    assert.equal(await store.dropStaleKept(storedBy + 1), 2);
    assert.equal(await kept.get('old'), undefined);
    assert.equal(await store.blindKeys('acct').get('old'), undefined);
  });

  it("keeps the device's flooding budget across accounts and restarts; a damaged value refuses rather than restarts", async () => {
    const name = `private-store-test-${n++}`;
    const store = await PrivateStore.open(name);
    const ledger = new FloodLedger(store.flood);
    await ledger.charge(5n << 80n);
    await store.setProvider({ url: 'http://127.0.0.1:8787', token: 'someone-else' }); // another account
    store.close();
    const again = await PrivateStore.open(name);
    assert.equal(await new FloodLedger(again.flood).spent(), 5n << 80n, 'the sum is the device’s, not an account’s');
    const { openDB } = await import('idb');
    const raw = await openDB(name);
    await raw.put('config', 'nonsense', 'flood-ledger');
    raw.close();
    await assert.rejects(new FloodLedger(again.flood).charge(1n), /damaged/);
    again.close();
  });

  it("the pool's workers charge the flooding budget at once and lose no charge; past the limit nothing is added", async () => {
    const name = `private-store-test-${n++}`;
    // Each worker has its own connection and its own ledger (its own realm).
    const workers = await Promise.all([1, 2, 3, 4].map(() => PrivateStore.open(name)));
    const ledgers = workers.map((w) => new FloodLedger(w.flood, 100n));
    await Promise.all(ledgers.flatMap((l) => Array.from({ length: 5 }, () => l.charge(3n))));
    assert.equal(await ledgers[0].spent(), 60n, 'twenty charges of 3, every one counted');
    const refused = await Promise.allSettled(ledgers.map((l) => l.charge(15n)));
    assert.equal(refused.filter((r) => r.status === 'rejected').length, 2, 'only two more fit under the limit');
    assert.equal(await ledgers[1].spent(), 90n);
    for (const w of workers) w.close();
  });

  it('an email fed by one worker is refused by another, by id and by content, though both logs were loaded before', async () => {
    const name = `private-store-test-${n++}`;
    const [a, b] = await Promise.all([PrivateStore.open(name), PrivateStore.open(name)]);
    const [logA, logB] = await Promise.all([ReplayLog.open(a.replay), ReplayLog.open(b.replay)]);
    const hash = 'cd'.repeat(32);
    await logA.admit({ messageId: 'm1', contentHash: hash });
    await assert.rejects(logB.admit({ messageId: 'm1', contentHash: 'ef'.repeat(32) }), { reason: 'message_id' });
    await assert.rejects(logB.admit({ messageId: 'm2', contentHash: hash }), { reason: 'content' });
    // The same content under two ids at once, one per worker: one is fed.
    const both = await Promise.allSettled([
      logA.admit({ messageId: 'm3', contentHash: '12'.repeat(32) }),
      logB.admit({ messageId: 'm4', contentHash: '12'.repeat(32) }),
    ]);
    assert.deepEqual(
      both.map((r) => r.status),
      ['fulfilled', 'rejected'],
    );
    a.close();
    b.close();
  });

  it('an email is checked against the replay log by key and index: the whole log is never read per email', async () => {
    const store = await freshStore();
    for (let i = 0; i < 50; i++)
      await store.replay.append({ messageId: `m${i}`, contentHash: i.toString(16).padStart(64, '0') });
    const proto = IDBObjectStore.prototype as unknown as Record<string, (...a: unknown[]) => unknown>;
    const wholeLog = ['getAll', 'getAllKeys', 'openCursor', 'openKeyCursor'];
    const reads: string[] = [];
    const saved = wholeLog.map((m) => proto[m]);
    wholeLog.forEach((m, i) => {
      proto[m] = function (this: unknown, ...a: unknown[]) {
        reads.push(m);
        return saved[i].apply(this, a);
      };
    });
    try {
      assert.equal(await store.replay.appendNew!({ messageId: 'new', contentHash: '7'.padStart(64, '0') }), 'content');
      assert.equal(await store.replay.appendNew!({ messageId: 'm3', contentHash: 'ff'.repeat(32) }), 'message_id');
      assert.equal(await store.replay.appendNew!({ messageId: 'new', contentHash: 'ee'.repeat(32) }), undefined);
    } finally {
      wholeLog.forEach((m, i) => (proto[m] = saved[i]));
    }
    assert.deepEqual(reads, [], 'no read of the whole store');
    assert.equal((await store.replay.load()).length, 51);
    store.close();
  });

  it('a version-4 database gets the replay log’s content index over the emails it already holds', async () => {
    const name = `private-store-test-${n++}`;
    const { openDB } = await import('idb');
    const v4 = await openDB(name, 4, { upgrade: (d) => void d.createObjectStore('topic-replay') });
    await v4.put('topic-replay', 'ab'.repeat(32), 'old');
    v4.close();
    const store = await PrivateStore.open(name);
    assert.equal(await store.replay.appendNew!({ messageId: 'new', contentHash: 'ab'.repeat(32) }), 'content');
    assert.deepEqual(await store.replay.load(), [{ messageId: 'old', contentHash: 'ab'.repeat(32) }]);
    store.close();
  });

  it('keeps the topic replay log for every account, and opens a version-1 database without losing it', async () => {
    const name = `private-store-test-${n++}`;
    const { openDB } = await import('idb');
    const v1 = await openDB(name, 1, { upgrade: (d) => void d.createObjectStore('verdicts') });
    await v1.put('verdicts', { kind: 'verdict', spam: true, at: 1 }, ['acct', 'm0']);
    v1.close();
    const store = await PrivateStore.open(name);
    assert.ok(await store.verdict('acct', 'm0'), 'the upgrade kept what version 1 stored');
    await store.replay.append({ messageId: 'm1', contentHash: 'ab'.repeat(32) });
    await store.setProvider({ url: 'http://127.0.0.1:8787', token: 'someone-else' });
    assert.deepEqual(await store.replay.load(), [{ messageId: 'm1', contentHash: 'ab'.repeat(32) }]);
    assert.equal(await store.topicShared('m1'), true);
    assert.equal(await store.topicShared('m2'), false);
  });

  it('the user’s “not spam” is kept with the verdict, survives a later outcome, and shows on the badge', async () => {
    const store = await PrivateStore.open('pmf-private-user-mark');
    const a = 'http://127.0.0.1:1|x';
    assert.equal(await store.markByUser(a, 'm1', false), false, 'nothing to correct yet: nothing written');
    assert.equal(await store.verdict(a, 'm1'), undefined);
    await store.putVerdict(a, 'm1', { kind: 'verdict', spam: true, at: 1 });
    assert.equal(await store.markByUser(a, 'm1', false), true);
    assert.equal(outcomeBadge((await store.verdict(a, 'm1'))!).text, 'not spam (you marked it)');
    // A batch replayed after a restart records the provider's outcome again: the correction stays.
    await store.putVerdict(a, 'm1', { kind: 'verdict', spam: true, at: 2 });
    const v = await store.verdict(a, 'm1');
    assert.equal(v?.at, 2);
    assert.equal(v?.user?.spam, false);
    assert.equal(outcomeBadge({ kind: 'verdict', spam: true }).text, 'spam (private check)');
    store.close();
  });

  it('settings: defaults, partial changes, and only booleans are stored', async () => {
    const store = await freshStore();
    // Topics are shared only once the user says so (asked when connecting).
    const on = { spamCheck: true, moveSpam: true, topics: false, linkCheck: true };
    assert.deepEqual(await store.settings(), on);
    assert.deepEqual(await store.setSettings({ spamCheck: false }), { ...on, spamCheck: false });
    await store.setSettings({ moveSpam: 'yes' as unknown as boolean });
    assert.deepEqual(await store.settings(), { ...on, spamCheck: false });
    assert.deepEqual(await store.setSettings({ linkCheck: false }), { ...on, spamCheck: false, linkCheck: false });
  });

  it('link check: outcomes per account, dropped with the account; the stored list package and its replacement', async () => {
    const store = await freshStore();
    const old = { url: 'http://127.0.0.1:8787', token: 'old-token' };
    const fresh = { url: 'http://127.0.0.1:8787', token: 'new-token' };
    const hit = { item: 'domain:evil.example', category: 'phishing', score: 90, since: '2024-05-30' };
    await store.setProvider(old);
    await store.putBlocklistOutcome(accountOf(old), 'm1', {
      kind: 'looked-up',
      listId: 'phish',
      version: 1,
      hits: [hit],
      at: 1,
    });
    await store.putBlocklistOutcome(accountOf(old), 'm2', { kind: 'already_classified', at: 1 });
    const m1 = await store.blocklistOutcome(accountOf(old), 'm1');
    assert.deepEqual(m1?.kind === 'looked-up' && m1.hits, [hit]);
    assert.equal((await store.blocklistOutcome(accountOf(old), 'm2'))?.kind, 'already_classified');
    assert.equal(await store.blocklistOutcome(accountOf(fresh), 'm1'), undefined);
    await store.setProvider(fresh);
    assert.equal(await store.blocklistOutcome(accountOf(old), 'm1'), undefined, 'gone with the old account');

    assert.equal(await store.storedPackage('blocklist-phish'), undefined);
    await store.packages.put('spam-v1', new Uint8Array([1]));
    await store.packages.put('blocklist-phish-v1', new Uint8Array([2]));
    assert.deepEqual(await store.storedPackage('blocklist-phish'), {
      key: 'blocklist-phish-v1',
      data: new Uint8Array([2]),
    });
    await store.packages.put('blocklist-phish-v2', new Uint8Array([3]));
    assert.deepEqual(await store.storedPackage('blocklist-phish'), {
      key: 'blocklist-phish-v2',
      data: new Uint8Array([3]),
    });
    assert.deepEqual(await store.storedPackage('spam'), { key: 'spam-v1', data: new Uint8Array([1]) });
  });
});
