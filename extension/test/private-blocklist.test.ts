// The extension's link check (private/blocklist-check.ts) against the real
// provider (HTTP listing and packages, blocklist_request in a session, the
// at-most-once store) with the extension's IndexedDB (fake-indexeddb): the
// list lands in IndexedDB pinned, hits come back with their records, every
// outcome is recorded so a restart asks nothing twice, a new version comes
// as a delta and replaces the old one, and every fault leaves no line.
import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { BlocklistEvaluator } from '../../client/core/blocklist.js';
import { ProtocolError } from '../../protocol/errors.js';
import type { ErrorCode } from '../../protocol/errors.js';
import { BlocklistCatalog } from '../../provider-server/src/blocklist.js';
import { NONCE, startHarness, TestClient, type Harness } from '../../provider-server/test/harness.js';
import { LinkChecker, type LinkCheckOptions } from '../private/blocklist-check.js';
import { accountOf } from '../private/account.js';
import { PrivateStore } from '../private/store.js';
import type { BlocklistOutcome } from '../private/worker-protocol.js';

const SOURCE_V1 = [
  'domain\tevil.example\tphishing\t90\t2024-05-30',
  `sha256\t${'ab'.repeat(32)}\tmalware\t99\t2024-06-30`,
].join('\n');
const SOURCE_V2 = `${SOURCE_V1}\nhost\tnew-phish.example\tphishing\t80\t2026-11-20`;

const mail = (text: string) => `From: a@b.example\r\nSubject: hi\r\nContent-Type: text/plain\r\n\r\n${text}\r\n`;
const LISTED = mail('Log in at https://login.evil.example/account today.');
const CLEAN = mail('The minutes are at https://good.example/minutes.');

let h: Harness;
let listDir: string;
let emptyDir: string;
/** What the provider serves; a test switches it (a published version, or no list at all). */
let catalog: BlocklistCatalog;
let alice: { userId: number; token: string };
let n = 0;

before(async () => {
  listDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-ext-bl-'));
  emptyDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-ext-bl-empty-'));
  await BlocklistCatalog.publish(listDir, 'phish', SOURCE_V1);
  catalog = BlocklistCatalog.open(listDir);
  const switching = new Proxy({} as BlocklistCatalog, {
    get:
      (_t, k: keyof BlocklistCatalog) =>
      (...a: never[]) =>
        (catalog[k] as (...x: never[]) => unknown)(...a),
  });
  h = await startHarness({ requestsPerMinute: 10_000 }, {}, { blocklists: switching });
  alice = await h.store.addUser('alice');
  for (const id of ['m1', 'm2', 'm3', 'm4', 'm5', 'm6', 'h1'])
    await h.store.deliver(alice.userId, id, 'Subject: x\n\nx\n');
});

after(async () => {
  await h?.close();
  for (const d of [listDir, emptyDir]) if (d) fs.rmSync(d, { recursive: true, force: true });
});

/** A provider session that answers blocklist requests (the extension uses a spam-model session). */
async function evaluator(token = alice.token): Promise<BlocklistEvaluator> {
  const c = await TestClient.connect(h.server.wsUrl);
  const w = await c.request('hello', 1, { token, modelId: 'spam', modelVersion: 2, clientNonce: NONCE, keyEpoch: 0 });
  assert.equal(w.name, 'welcome');
  return {
    async evaluateBlocklist(messageId, list, blinded) {
      const m = await c.request('blocklist_request', 7, {
        messageId,
        listId: list.listId,
        listVersion: list.version,
        blinded,
      });
      if (m.name === 'error') throw new ProtocolError(m.code as ErrorCode, m.message);
      if (m.name !== 'blocklist_reply') throw new Error(`unexpected ${m.name}`);
      return { evaluated: m.evaluated, bytesSent: 0, bytesReceived: 0 };
    },
    close: () => c.close(),
  };
}

const provider = () => ({ url: h.server.httpUrl, token: alice.token });

/** A checker as the worker builds it, counting sessions and fetches. */
async function checker(o: Partial<LinkCheckOptions> & { store?: PrivateStore } = {}) {
  const store = o.store ?? (await PrivateStore.open(`private-blocklist-test-${n++}`));
  const seen = { sessions: 0, fetched: [] as string[], logged: [] as string[] };
  const c = new LinkChecker({
    baseUrl: provider().url,
    account: accountOf(provider()),
    store,
    connect: async () => {
      seen.sessions++;
      return evaluator();
    },
    fetch: (url, init) => {
      seen.fetched.push(new URL(String(url)).pathname);
      return fetch(url, init);
    },
    logCheck: async (id, v, sha) => void seen.logged.push(`${id} v${v} ${sha.slice(0, 8)}`),
    reconnectWindowMs: 300,
    ...o,
  });
  const check = async (items: { messageId: string; raw: string }[]) => {
    const out: BlocklistOutcome[] = [];
    await c.check(items, (x) => out.push(x));
    return out;
  };
  return { c, store, seen, check };
}

describe('link check (worker side)', () => {
  it('downloads the list into IndexedDB (pinned, logged), finds the listed link with its record, records every outcome', async () => {
    const k = await checker();
    const out = await k.check([
      { messageId: 'm1', raw: LISTED },
      { messageId: 'm2', raw: CLEAN },
    ]);
    assert.deepEqual(out, [
      {
        messageId: 'm1',
        hits: [{ item: 'domain:evil.example', category: 'phishing', score: 90, since: '2024-05-30' }],
      },
      { messageId: 'm2', hits: [] },
    ]);
    assert.deepEqual(k.seen.fetched, ['/blocklists', '/blocklists', '/blocklists/phish/1']);
    assert.match(k.seen.logged[0], /^blocklist-phish v1 [0-9a-f]{8}$/);
    assert.equal(k.seen.sessions, 1, 'one session for the batch');
    assert.equal((await k.store.storedPackage('blocklist-phish'))?.key, 'blocklist-phish-v1');
    const rec = await k.store.blocklistOutcome(accountOf(provider()), 'm1');
    assert.equal(rec?.kind === 'looked-up' && rec.hits[0].item, 'domain:evil.example');
    assert.equal(await h.store.isClassified(alice.userId, 'm1', 'blocklist'), true);

    // After a restart (a new checker on the same database): answered from IndexedDB, nothing fetched or asked.
    const again = await checker({ store: k.store });
    const told = await again.check([{ messageId: 'm1', raw: LISTED }]);
    assert.deepEqual(told[0].hits, out[0].hits);
    assert.deepEqual([again.seen.sessions, again.seen.fetched], [0, []]);

    // A new checker with a fresh message opens the stored package: no download.
    const m3 = await again.check([{ messageId: 'm3', raw: CLEAN }]);
    assert.deepEqual(m3, [{ messageId: 'm3', hits: [] }]);
    assert.deepEqual(again.seen.fetched, ['/blocklists', '/blocklists'], 'the listing only: the package was stored');
    k.store.close();
  });

  it('goes on over the session it is handed (the spam check’s): no hello of its own; a handed session it does not need is closed', async () => {
    const k = await checker();
    const closes: string[] = [];
    const handed = async (name: string): Promise<BlocklistEvaluator> => {
      const s = await evaluator();
      return { ...s, close: () => (closes.push(name), s.close()) };
    };
    const out: BlocklistOutcome[] = [];
    await k.c.check([{ messageId: 'h1', raw: LISTED }], (x) => out.push(x), await handed('used'));
    assert.equal(out[0].hits[0]?.item, 'domain:evil.example');
    assert.equal(k.seen.sessions, 0, 'no session of its own');
    assert.ok(closes.includes('used'));
    // Looked up before: nothing to ask, and the handed session is closed all the same.
    await k.c.check([{ messageId: 'h1', raw: LISTED }], () => {}, await handed('unused'));
    assert.ok(closes.includes('unused'));
    assert.equal(k.seen.sessions, 0);
    k.store.close();
  });

  it('a message looked up before elsewhere (already_classified) is recorded, shows no line and is never asked again', async () => {
    const other = await checker();
    await other.check([{ messageId: 'm4', raw: LISTED }]); // "another device"
    const k = await checker();
    const out = await k.check([{ messageId: 'm4', raw: LISTED }]);
    assert.equal(out[0].hits.length, 0);
    assert.match(out[0].detail ?? '', /already_classified/);
    assert.equal((await k.store.blocklistOutcome(accountOf(provider()), 'm4'))?.kind, 'already_classified');
    const sessions = k.seen.sessions;
    await k.check([{ messageId: 'm4', raw: LISTED }]);
    assert.equal(k.seen.sessions, sessions, 'not asked again');
  });

  it('provider down, no list published: no line, nothing recorded, nothing sent', async () => {
    const down = await checker({ baseUrl: 'http://127.0.0.1:9' });
    const out = await down.check([{ messageId: 'm5', raw: LISTED }]);
    assert.deepEqual(
      out.map((o) => o.hits.length),
      [0],
    );
    assert.ok(out[0].detail);
    assert.equal(await down.store.blocklistOutcome(accountOf(provider()), 'm5'), undefined);

    const published = catalog;
    catalog = BlocklistCatalog.open(emptyDir);
    try {
      const none = await checker();
      const o = await none.check([{ messageId: 'm5', raw: LISTED }]);
      assert.match(o[0].detail ?? '', /publishes no blocklist/);
      assert.equal(none.seen.sessions, 0, 'no session opened');
      assert.equal(await none.store.blocklistOutcome(accountOf(provider()), 'm5'), undefined);
    } finally {
      catalog = published;
    }
    assert.equal(await h.store.isClassified(alice.userId, 'm5', 'blocklist'), false);
  });

  it('a refused lookup (over budget, rate limited) shows no line and is not recorded: the next view asks again', async () => {
    for (const code of ['bad_field', 'rate_limited'] as const) {
      const k = await checker({
        connect: async () => ({
          evaluateBlocklist: async () => {
            throw new ProtocolError(code, `refused: ${code}`);
          },
          close: () => {},
        }),
      });
      const out = await k.check([{ messageId: 'm5', raw: LISTED }]);
      assert.deepEqual(out[0].hits, []);
      assert.match(out[0].detail ?? '', new RegExp(code));
      assert.equal(await k.store.blocklistOutcome(accountOf(provider()), 'm5'), undefined);
    }
  });

  it('a new version announced mid-use (model_outdated) comes as a delta from the stored one and replaces it', async () => {
    const k = await checker();
    await k.check([{ messageId: 'm2', raw: CLEAN }]); // v1 loaded (m2 was looked up: already_classified)
    await BlocklistCatalog.publish(listDir, 'phish', SOURCE_V2);
    catalog = BlocklistCatalog.open(listDir);
    k.seen.fetched.length = 0;
    const out = await k.check([
      { messageId: 'm6', raw: mail('See http://new-phish.example/x and https://login.evil.example/') },
    ]);
    assert.deepEqual(
      out[0].hits.map((x) => `${x.item} ${x.category} ${x.since}`),
      ['domain:evil.example phishing 2024-05-30', 'host:new-phish.example phishing 2026-11-20'],
    );
    assert.ok(k.seen.fetched.includes('/blocklists/phish/2/delta'), k.seen.fetched.join(' '));
    assert.ok(!k.seen.fetched.includes('/blocklists/phish/2'), 'no full download');
    assert.equal((await k.store.storedPackage('blocklist-phish'))?.key, 'blocklist-phish-v2');
    const rec = await k.store.blocklistOutcome(accountOf(provider()), 'm6');
    assert.equal(rec?.kind === 'looked-up' && rec.version, 2);
  });
});
