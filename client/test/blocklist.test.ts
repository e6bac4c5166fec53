// The private blocklist against the real provider (session, store, HTTP) and
// the client's code (client/core/blocklist.ts): hits match the plaintext list,
// a client cannot dump the list by querying, bad elements are refused without
// being counted, the provider's view does not depend on which items were
// looked up, and a malicious provider's answers or packages are refused.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { ristretto255 } from '@noble/curves/ed25519.js';
import { encodeList, ITEMS_PER_MESSAGE, openList, oprfReady, type BlockList } from '../../protocol/blocklist.js';
import { encodeFrame } from '../../protocol/frame.js';
import { encodeMessage, SCHEMAS, type Message } from '../../protocol/messages.js';
import {
  blindKeysInMemory,
  blocklistClassifiers,
  type BlindKeys,
  ensureBlocklist,
  lookupItems,
  poolFor,
  type BlocklistResult,
} from '../core/blocklist.js';
import { runClassification, type RunOutcome } from '../core/runner.js';
import { ProtocolError } from '../../protocol/errors.js';
import { ConnectionClosed } from '../core/interrupted-request.js';
import { PackageIntegrityError, type PackageStorage } from '../core/download.js';
import { BlocklistCatalog, evaluateElements, readOprfKey } from '../../provider-server/src/blocklist.js';
import { NONCE, startHarness, TestClient, type Harness } from '../../provider-server/test/harness.js';
import type { Store } from '../../provider-server/src/store.js';
import { openSqliteStore } from '../../provider-server/src/store-sqlite.js';
import { tempDir } from '../../scripts/test/temp-dir.js';

const SOURCE_V1 = [
  'domain\tevil.example\tphishing\t90\t2026-11-02',
  'host\tcdn.malware.example\tmalware\t70\t2025-01-15',
  `sha256\t${'ab'.repeat(32)}\tmalware\t99\t2024-06-30`,
  'url\thttps://bank.example.net/login?x=1\tphishing\t60\t2026-10-01',
].join('\n');
const SOURCE_V2 = `${SOURCE_V1.split('\n').slice(1).join('\n')}\ndomain\tnew-phish.example\tphishing\t80\t2026-11-20`;

let h: Harness;
let listDir: string;
let token: string;
let userId: number;
let v1: BlockList;
let v2: BlockList;
const storage = (): PackageStorage & { data: Map<string, Uint8Array> } => {
  const data = new Map<string, Uint8Array>();
  const partial = new Map<string, { etag: string; bytes: Uint8Array }>();
  return {
    data,
    get: async (k) => data.get(k),
    getPartial: async (k) => partial.get(k),
    appendPartial: async (k, etag, chunk) => {
      const p = partial.get(k)?.bytes ?? new Uint8Array(0);
      partial.set(k, { etag, bytes: new Uint8Array([...p, ...chunk]) });
    },
    dropPartial: async (k) => void partial.delete(k),
    put: async (k, d) => {
      data.set(k, d);
      partial.delete(k);
    },
  };
};

before(async () => {
  await oprfReady();
  listDir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-bl-'));
  await BlocklistCatalog.publish(listDir, 'phish', SOURCE_V1, new Date('2026-11-22T00:00:00Z'));
  await BlocklistCatalog.publish(listDir, 'phish', SOURCE_V2, new Date('2026-11-23T00:00:00Z'));
  const read = (v: number) => openList(fs.readFileSync(path.join(listDir, 'blocklists', 'phish', `v${v}.pmfbl`)));
  v1 = read(1);
  v2 = read(2);
  h = await startHarness({ requestsPerMinute: 10_000 }, {}, { blocklists: BlocklistCatalog.open(listDir) });
  ({ token, userId } = await h.store.addUser('alice'));
  for (let i = 0; i < 10; i++) await h.store.deliver(userId, `m${i}`, `Subject: ${i}\n\nbody ${i}\n`);
});
after(async () => {
  await h.close();
  fs.rmSync(listDir, { recursive: true, force: true });
});

async function session(): Promise<TestClient> {
  const c = await TestClient.connect(h.server.wsUrl);
  const w = await c.request('hello', 1, { token, modelId: 'spam', modelVersion: 2, clientNonce: NONCE, keyEpoch: 0 });
  assert.equal(w.name, 'welcome');
  return c;
}

/** Sends one blocklist_request and returns the provider's answer frame. */
/** Sends one blocklist_request, encoded by hand so that any number of elements goes, and returns the answer frame. */
async function ask(c: TestClient, messageId: string, blinded: Uint8Array, listVersion = 2): Promise<Message> {
  const str = (x: string) => {
    const b = Buffer.from(x, 'utf8');
    return Buffer.concat([Buffer.from([b.length >> 8, b.length & 0xff]), b]);
  };
  const u32 = (v: number) => Buffer.from([v >>> 24, (v >>> 16) & 0xff, (v >>> 8) & 0xff, v & 0xff]);
  const body = Buffer.concat([str(messageId), str('phish'), u32(listVersion), u32(blinded.length), blinded]);
  c.sendRaw(encodeFrame(SCHEMAS.blocklist_request.type, 7, body));
  return c.next();
}

/** The client's lookup through the real provider: evaluated elements must come back for `messageId`. */
async function lookupVia(c: TestClient, messageId: string, items: string[]) {
  return lookupItems(v2, items, async (blinded) => {
    const m = await ask(c, messageId, blinded);
    if (m.name !== 'blocklist_reply') throw new Error(`${m.name}: ${m.name === 'error' ? m.code : ''}`);
    return m.evaluated;
  });
}

/** A request's ITEMS_PER_MESSAGE elements (or `n`), distinct for each `tag`. */
const blindedOf = (tag: string, n: number = ITEMS_PER_MESSAGE): Uint8Array => {
  const base = BigInt(`0x${createHash('sha256').update(tag).digest('hex').slice(0, 12)}`);
  const out = new Uint8Array(n * 32);
  for (let i = 0; i < n; i++) out.set(ristretto255.Point.BASE.multiply(base + BigInt(i + 2)).toBytes(), i * 32);
  return out;
};

test('the client finds exactly the listed items and their records (the plaintext list is the reference)', async () => {
  const c = await session();
  const hits = await lookupVia(c, 'm0', [
    'domain:evil.example', // removed in v2
    'host:cdn.malware.example',
    `sha256:${'ab'.repeat(32)}`,
    'url:https://bank.example.net/login?x=1',
    'domain:new-phish.example',
    'domain:good.example',
  ]);
  assert.deepEqual(hits, [
    { item: 'host:cdn.malware.example', category: 'malware', score: 70, since: '2025-01-15' },
    { item: `sha256:${'ab'.repeat(32)}`, category: 'malware', score: 99, since: '2024-06-30' },
    { item: 'url:https://bank.example.net/login?x=1', category: 'phishing', score: 60, since: '2026-10-01' },
    { item: 'domain:new-phish.example', category: 'phishing', score: 80, since: '2026-11-20' },
  ]);
  c.close();
});

test('a client cannot evaluate the OPRF beyond its budget: once per delivered message, exactly ITEMS_PER_MESSAGE elements', async () => {
  const c = await session();
  const count = async () =>
    Number(/pmf_blocklist_items_total\{list="phish"\} (\d+)/.exec(await h.server.metrics.registry.metrics())?.[1] ?? 0);
  const before = await count();
  for (const n of [ITEMS_PER_MESSAGE + 1, ITEMS_PER_MESSAGE - 1, 1]) {
    const wrong = await ask(c, 'm1', blindedOf('x', n));
    assert.equal(wrong.name === 'error' && wrong.code, 'bad_field', `${n} elements`);
  }
  assert.equal(await h.store.isClassified(userId, 'm1', 'blocklist'), false); // refused before the claim
  const full = await ask(c, 'm1', blindedOf('y'));
  assert.equal(full.name, 'blocklist_reply');
  const replay = await ask(c, 'm1', blindedOf('z'));
  assert.equal(replay.name === 'error' && replay.code, 'already_classified');
  // Replays from a new session are refused too; a message never delivered is unknown.
  const c2 = await session();
  const again = await ask(c2, 'm1', blindedOf('z'));
  assert.equal(again.name === 'error' && again.code, 'already_classified');
  const foreign = await ask(c2, 'not-delivered', blindedOf('z'));
  assert.equal(foreign.name === 'error' && foreign.code, 'unknown_message');
  // The only evaluations the provider did: one message's ITEMS_PER_MESSAGE items.
  assert.equal((await count()) - before, ITEMS_PER_MESSAGE);
  // Spam classification of the same message is a separate task (its own claim).
  assert.equal(await h.store.isClassified(userId, 'm1', 'spam'), false);
  c.close();
  c2.close();
});

test('a reply lost on the way is given again for the very same request, byte for byte, and for no other', async () => {
  const count = async () =>
    Number(/pmf_blocklist_items_total\{list="phish"\} (\d+)/.exec(await h.server.metrics.registry.metrics())?.[1] ?? 0);
  const blinded = blindedOf('lost');
  const before = await count();
  const first = await session();
  const reply = await ask(first, 'm7', blinded);
  assert.equal(reply.name, 'blocklist_reply');
  first.close(); // as if the reply never arrived
  const second = await session();
  const again = await ask(second, 'm7', blinded);
  assert.deepEqual(again, reply);
  // One element changed is another request: refused, so the budget stays one lookup per message.
  const other = blinded.slice();
  other.set(blindedOf('other').subarray(0, 32), 32);
  const refused = await ask(second, 'm7', other);
  assert.equal(refused.name === 'error' && refused.code, 'already_classified');
  assert.equal((await count()) - before, ITEMS_PER_MESSAGE, 'the elements are counted once');
  second.close();
});

test('the client sends an interrupted lookup again unchanged after reconnecting, and gets its hits', async () => {
  await h.store.deliver(
    userId,
    'lost-reply',
    'From: a@b\nSubject: x\n\nsee https://cdn.malware.example/x and https://good.example/\n',
  );
  const sent: Uint8Array[] = [];
  let sessions = 0;
  const classifiers = blocklistClassifiers(async () => {
    const c = await session();
    const first = sessions++ === 0;
    return {
      async evaluateBlocklist(messageId, list, blinded) {
        sent.push(blinded.slice());
        const m = await ask(c, messageId, blinded, list.version);
        if (m.name !== 'blocklist_reply') throw new Error(`${m.name}: ${m.name === 'error' ? m.code : ''}`);
        if (first) throw new ConnectionClosed('the reply was lost'); // evaluated, claimed, never received
        return { evaluated: m.evaluated, bytesSent: 0, bytesReceived: 0 };
      },
      close: () => c.close(),
    };
  }, v2);
  const outcomes: RunOutcome<BlocklistResult>[] = [];
  await runClassification<BlocklistResult>(
    [{ id: 'lost-reply', raw: async () => (await h.store.getMessage(userId, 'lost-reply'))!.raw! }],
    { connect: classifiers.connect, onOutcome: (o) => void outcomes.push(o) },
  );
  assert.equal(sessions, 2);
  assert.equal(sent.length, 2);
  assert.deepEqual(sent[1], sent[0], 'the same request again');
  assert.equal(outcomes.length, 1);
  const o = outcomes[0];
  assert.equal(o.kind, 'verdict');
  assert.deepEqual(o.kind === 'verdict' && o.hits.map((x) => x.item), ['host:cdn.malware.example']);
});

/** A run over one message whose requests go to `sent`; `stop`: the provider evaluates it, and the client stops before the reply. */
async function runOnce(id: string, raw: string, keys: BlindKeys, stop: boolean, sent: Uint8Array[]) {
  const classifiers = blocklistClassifiers(
    async () => {
      const c = await session();
      return {
        async evaluateBlocklist(messageId, list, blinded) {
          sent.push(blinded.slice());
          const m = await ask(c, messageId, blinded, list.version);
          if (m.name !== 'blocklist_reply')
            throw new ProtocolError(m.name === 'error' ? (m.code as never) : 'internal', m.name);
          if (stop) throw new Error('the client stopped');
          return { evaluated: m.evaluated, bytesSent: 0, bytesReceived: 0 };
        },
        close: () => c.close(),
      };
    },
    v2,
    keys,
  );
  const outcomes: RunOutcome<BlocklistResult>[] = [];
  await runClassification<BlocklistResult>([{ id, raw: async () => raw }], {
    connect: classifiers.connect,
    journal: classifiers.journal,
    onOutcome: (o) => void outcomes.push(o),
  });
  return outcomes;
}

test('a lookup interrupted by a stop of the client is sent again unchanged at its next run, from the blinds kept on the device', async () => {
  const raw = 'From: a@b\nSubject: x\n\nsee https://cdn.malware.example/y and https://good.example/\n';
  for (const id of ['stopped', 'stopped-no-key', 'stopped-old-key']) await h.store.deliver(userId, id, raw);
  const device = blindKeysInMemory(); // what survives the stop, as IndexedDB or the CLI's cache would
  const sent: Uint8Array[] = [];
  await assert.rejects(runOnce('stopped', raw, device, true, sent), /the client stopped/);
  assert.ok(await device.get('stopped'), 'the blinds were kept');
  const [o] = await runOnce('stopped', raw, device, false, sent);
  assert.deepEqual(sent[1], sent[0], 'the same request again');
  assert.deepEqual(o.kind === 'verdict' && o.hits.map((x) => x.item), ['host:cdn.malware.example']);
  assert.equal(await device.get('stopped'), undefined, 'forgotten once the outcome is stored');

  // Without the kept blinds (or with a blinding key kept by a version before them) the next run is another request:
  // refused, the hits lost.
  await assert.rejects(runOnce('stopped-no-key', raw, blindKeysInMemory(), true, sent), /the client stopped/);
  const [lost] = await runOnce('stopped-no-key', raw, blindKeysInMemory(), false, sent);
  assert.equal(lost.kind, 'already_classified');
  await assert.rejects(runOnce('stopped-old-key', raw, device, true, sent), /the client stopped/);
  await device.put('stopped-old-key', new Uint8Array(32).fill(7));
  const [old] = await runOnce('stopped-old-key', raw, device, false, sent);
  assert.equal(old.kind, 'already_classified');
});

test('kept blinds never blind other items: a message read with other items since is not sent again', async () => {
  const raw = 'From: a@b\nSubject: x\n\nsee https://cdn.malware.example/y and https://good.example/\n';
  await h.store.deliver(userId, 'changed', raw);
  const device = blindKeysInMemory();
  const sent: Uint8Array[] = [];
  await assert.rejects(runOnce('changed', raw, device, true, sent), /the client stopped/);
  // The same number of items, others: the kept blinds would show the provider H(x) − H(x') for each.
  const other = raw.replace('good.example', 'fine.example');
  const [o] = await runOnce('changed', other, device, false, sent);
  assert.equal(sent.length, 1, 'nothing sent for the other items');
  assert.equal(o.kind, 'already_classified');
});

test('the daily cap on OPRF evaluations holds per account across instances and restarts, and says when to retry', async () => {
  const file = path.join(tempDir('pmf-bl-cap-'), 'store.db');
  const cap = 2 * ITEMS_PER_MESSAGE; // two messages a day
  const instance = (store: Store) =>
    startHarness(
      { requestsPerMinute: 10_000, blocklistEvaluationsPerDay: cap, backlogAllowance: 0 },
      {},
      { blocklists: BlocklistCatalog.open(listDir), store },
    );
  const stores = [openSqliteStore(file), openSqliteStore(file)];
  const instances = [await instance(stores[0]), await instance(stores[1])];
  const mallory = await stores[0].addUser('mallory');
  const bob = await stores[0].addUser('bob');
  for (const u of [mallory, bob])
    for (let i = 0; i < 3; i++) await stores[0].deliver(u.userId, `c${i}`, 'Subject: x\n\nx');
  const open = async (at: Harness, who: string) => {
    const c = await TestClient.connect(at.server.wsUrl);
    const w = await c.request('hello', 1, {
      token: who,
      modelId: 'spam',
      modelVersion: 2,
      clientNonce: NONCE,
      keyEpoch: 0,
    });
    assert.equal(w.name, 'welcome');
    return c;
  };
  const limited = (m: Message) => {
    assert.ok(m.name === 'error' && m.code === 'daily_limit', JSON.stringify(m.name === 'error' ? m : m.name));
    assert.match(
      m.message,
      /^at most 2 link checks \(64 OPRF evaluations\) per account per day; try again after \d{4}-\d\d-\d\dT00:00:00\.000Z$/,
    );
    assert.ok(Date.parse(m.message.slice(-24)) - Date.now() <= 86_400_000);
  };
  try {
    // One message on each instance, then the third is refused on either, and stays unclaimed for tomorrow.
    const [a, b] = [await open(instances[0], mallory.token), await open(instances[1], mallory.token)];
    assert.equal((await ask(a, 'c0', blindedOf('c0'))).name, 'blocklist_reply');
    assert.equal((await ask(b, 'c1', blindedOf('c1'))).name, 'blocklist_reply');
    limited(await ask(a, 'c2', blindedOf('c2')));
    limited(await ask(b, 'c2', blindedOf('c2')));
    assert.equal(await stores[0].isClassified(mallory.userId, 'c2', 'blocklist'), false);
    // A reply lost on the way is still given again: the same elements, no new guess.
    assert.equal((await ask(b, 'c0', blindedOf('c0'))).name, 'blocklist_reply');
    // Another account has its own count.
    assert.equal((await ask(await open(instances[1], bob.token), 'c0', blindedOf('b0'))).name, 'blocklist_reply');

    // A restarted instance counts on: the count is in the store.
    await instances[0].close();
    await stores[0].close();
    stores[0] = openSqliteStore(file);
    instances[0] = await instance(stores[0]);
    limited(await ask(await open(instances[0], mallory.token), 'c2', blindedOf('c2')));

    // The real client stops its run at once with the error, and records no outcome.
    const outcomes: RunOutcome<BlocklistResult>[] = [];
    const classifiers = blocklistClassifiers(async () => {
      const c = await open(instances[0], mallory.token);
      return {
        async evaluateBlocklist(messageId, list, blinded) {
          const m = await ask(c, messageId, blinded, list.version);
          if (m.name !== 'blocklist_reply')
            throw new ProtocolError(m.name === 'error' ? (m.code as never) : 'internal', m.name);
          return { evaluated: m.evaluated, bytesSent: 0, bytesReceived: 0 };
        },
        close: () => c.close(),
      };
    }, v2);
    await assert.rejects(
      runClassification<BlocklistResult>([{ id: 'c2', raw: async () => 'Subject: x\n\nsee https://evil.example/' }], {
        connect: classifiers.connect,
        onOutcome: (o) => void outcomes.push(o),
      }),
      (e: Error) => e instanceof ProtocolError && e.code === 'daily_limit',
    );
    assert.deepEqual(outcomes, []);
  } finally {
    for (const i of instances) await i.close();
    for (const st of stores) await st.close();
  }
});

test('a list published without its public key is refused with an error saying so', async () => {
  const keyless = openList(
    encodeList({ listId: 'old', version: 4, categories: ['phishing'], createdAt: '2026-01-01T00:00:00Z' }, []),
  );
  await assert.rejects(
    lookupItems(keyless, ['domain:evil.example'], async () => new Uint8Array(32)),
    /list old version 4 was published without its public key/,
  );
});

test('publishing the same source again replaces a version published without the public key, and only that', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-bl-key-'));
  try {
    const at = new Date('2026-11-22T00:00:00Z');
    assert.equal((await BlocklistCatalog.publish(dir, 'phish', SOURCE_V1, at)).version, 1);
    // Version 1 as a provider before the key was published wrote it.
    const listDir = path.join(dir, 'blocklists', 'phish');
    const v1File = path.join(listDir, 'v1.pmfbl');
    const { publicKey, ...header } = openList(fs.readFileSync(v1File)).header;
    assert.match(publicKey ?? '', /^[0-9a-f]{64}$/);
    const body = openList(fs.readFileSync(v1File)).body;
    const entries = Array.from({ length: header.entries }, (_, i) => body.slice(12 * i, 12 * i + 12));
    const keyless = encodeList(
      { listId: header.listId, version: 1, categories: header.categories, createdAt: header.createdAt },
      entries,
    );
    fs.writeFileSync(v1File, keyless);
    const versions = JSON.parse(fs.readFileSync(path.join(listDir, 'versions.json'), 'utf8'));
    versions[0].sha256 = createHash('sha256').update(keyless).digest('hex');
    versions[0].bytes = keyless.length;
    fs.writeFileSync(path.join(listDir, 'versions.json'), JSON.stringify(versions));

    const again = await BlocklistCatalog.publish(dir, 'phish', SOURCE_V1, at);
    assert.deepEqual(again, { version: 2, entries: 4, published: true });
    const v2again = openList(fs.readFileSync(path.join(listDir, 'v2.pmfbl')));
    assert.equal(v2again.header.publicKey, publicKey);
    assert.equal(Buffer.compare(v2again.body, body), 0);
    assert.deepEqual(await BlocklistCatalog.publish(dir, 'phish', SOURCE_V1, at), {
      version: 2,
      entries: 4,
      published: false,
    });
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

test('malformed, identity and non-canonical elements are refused, not counted, and the session goes on', async () => {
  const c = await session();
  const good = blindedOf('good');
  const identity = good.slice();
  identity.fill(0, 32, 64);
  const nonCanonical = good.slice();
  nonCanonical.set(new Uint8Array(32).fill(0xff), 32); // above the field prime: not a canonical encoding
  const negative = good.slice();
  negative.set(ristretto255.Point.BASE.toBytes(), 32);
  negative[32] |= 1; // odd field element: ristretto255 encodings are "non-negative"
  for (const [blinded, why] of [
    [identity, /element 1 is the identity/],
    [nonCanonical, /element 1 is not a canonical/],
    [negative, /element 1 is not a canonical/],
    [good.subarray(0, 40), /blinded is 40 bytes, expected 1024\.\.1024/],
  ] as const) {
    const m = await ask(c, 'm2', blinded);
    assert.equal(m.name, 'error');
    assert.match(m.name === 'error' ? m.message : '', why);
    assert.equal(await h.store.isClassified(userId, 'm2', 'blocklist'), false);
  }
  assert.equal((await ask(c, 'm2', good)).name, 'blocklist_reply');
  const old = await ask(c, 'm3', good, 1);
  assert.equal(old.name === 'error' && old.code, 'model_outdated');
  assert.equal(c.closed, undefined);
  c.close();
});

test("the provider's view is the same for emails of any items and any count, none and the most included", async () => {
  const c = await session();
  const views: unknown[] = [];
  const requests: Uint8Array[] = [];
  const many = Array.from({ length: ITEMS_PER_MESSAGE }, (_, i) => `host:h${i}.example`);
  for (const [id, items] of [
    ['m4', ['domain:evil.example', 'host:cdn.malware.example', 'url:https://a.example/']],
    ['m5', ['domain:good.example']],
    ['m6', []],
    ['m8', many],
  ] as const) {
    const metricsBefore = await h.server.metrics.registry.metrics();
    const logsBefore = h.logs.length;
    let view: Record<string, unknown> = {};
    await lookupItems(v2, items, async (blinded) => {
      requests.push(blinded.slice());
      const m = await ask(c, id, blinded);
      assert.equal(m.name, 'blocklist_reply');
      view = {
        requestBytes: encodeMessage('blocklist_request', 7, { messageId: id, listId: 'phish', listVersion: 2, blinded })
          .length,
        replyBytes: m.name === 'blocklist_reply' && encodeMessage('blocklist_reply', 7, m).length,
      };
      return m.name === 'blocklist_reply' ? m.evaluated : new Uint8Array(0);
    });
    const metricsAfter = await h.server.metrics.registry.metrics();
    views.push({
      ...view,
      claimed: await h.store.isClassified(userId, id, 'blocklist'),
      logs: h.logs.slice(logsBefore),
      // What the service's metrics learnt: the counters that moved, and by how much (timings and process gauges excluded).
      counters: counterDelta(metricsBefore, metricsAfter),
    });
  }
  for (const v of views.slice(1)) assert.deepEqual(v, views[0]);
  // Each element the provider sees is a fresh uniform group element: blinding the same items twice differs,
  // and no element of one request is in another.
  const again = await lookupItems(v2, ['domain:evil.example'], async (b) => {
    requests.push(b.slice());
    return blindedOf('any answer');
  });
  assert.deepEqual(again, []);
  const elements = requests.flatMap((r) => Array.from({ length: ITEMS_PER_MESSAGE }, (_, i) => hex(r, i)));
  assert.equal(new Set(elements).size, elements.length);
  c.close();
});

/** The 32-byte element `i` of a request, in hex. */
const hex = (b: Uint8Array, i: number): string => Buffer.from(b.subarray(32 * i, 32 * i + 32)).toString('hex');

test("padding is r·G, in byte order among the items; its answers are checked like the items' and then dropped", async () => {
  const items = ['domain:evil.example', 'host:cdn.malware.example', 'domain:good.example'];
  const key = readOprfKey(path.join(listDir, 'blocklists', 'phish', 'key'));
  /** Looks `items` up with fresh pairs; the provider answers honestly except where `forge` says otherwise. */
  const lookupWith = async (forge: (at: number, padding: boolean) => Uint8Array | undefined) => {
    const pairs = poolFor(v2).take(ITEMS_PER_MESSAGE);
    const padding = new Set(pairs.slice(items.length).map((p) => Buffer.from(p.toAdd).toString('hex')));
    let sent = new Uint8Array(0);
    const hits = await lookupItems(
      v2,
      items,
      async (blinded) => {
        sent = blinded.slice();
        const out = evaluateElements(key, blinded);
        for (let at = 0; at < ITEMS_PER_MESSAGE; at++) {
          const forged = forge(at, padding.has(hex(blinded, at)));
          if (forged) out.set(forged, 32 * at);
        }
        return out;
      },
      pairs,
    );
    return { hits: hits.map((x) => x.item), sent, padding };
  };
  const listed = ['host:cdn.malware.example'];

  const { hits, sent, padding } = await lookupWith(() => undefined);
  assert.deepEqual(hits, listed);
  const order = Array.from({ length: ITEMS_PER_MESSAGE }, (_, i) => hex(sent, i));
  assert.deepEqual(order, [...order].sort(), 'in byte order');
  assert.equal(order.filter((e) => padding.has(e)).length, ITEMS_PER_MESSAGE - items.length);
  // Wrong but valid answers to the padding change nothing: the client never uses them.
  const base = ristretto255.Point.BASE.toBytes();
  assert.deepEqual((await lookupWith((_, pad) => (pad ? base : undefined))).hits, listed);
  // An invalid answer anywhere is refused in the same words, whether it answered an item or padding.
  for (const at of [0, 7, 19, 31])
    for (const bytes of [new Uint8Array(32), new Uint8Array(32).fill(0xff)])
      await assert.rejects(
        lookupWith((i) => (i === at ? bytes : undefined)),
        new RegExp(`^Error: the provider's answer ${at} is not a valid ristretto255 element$`),
      );
  await assert.rejects(
    lookupItems(v2, items, async () => new Uint8Array(31 * 32)),
    /evaluated 31 elements, not 32/,
  );
});

function counterDelta(before: string, after: string): Record<string, number> {
  const parse = (t: string) =>
    new Map(
      t
        .split('\n')
        .filter((l) => /^pmf_/.test(l) && !/^pmf_(crypto_seconds|store_seconds_(bucket|sum)|process_|nodejs_)/.test(l))
        .map((l) => [l.slice(0, l.lastIndexOf(' ')), Number(l.slice(l.lastIndexOf(' ') + 1))]),
    );
  const a = parse(before);
  const out: Record<string, number> = {};
  for (const [k, v] of parse(after)) if (v !== (a.get(k) ?? 0)) out[k] = v - (a.get(k) ?? 0);
  return out;
}

test('the list downloads pinned (full with Range, or the delta from the version held) and a tampered package is refused', async () => {
  const base = h.server.httpUrl;
  const fetched: string[] = [];
  const logged: string[] = [];
  const logCheck = async (id: string, v: number, sha: string) => void logged.push(`${id} v${v} ${sha}`);
  const counting: typeof fetch = (url, init) => {
    fetched.push(new URL(String(url)).pathname);
    return fetch(url, init);
  };
  const full = await ensureBlocklist({ baseUrl: base, listId: 'phish', storage: storage(), fetch: counting, logCheck });
  assert.equal(Buffer.compare(full.list.body, v2.body), 0);
  assert.deepEqual(fetched, ['/blocklists', '/blocklists/phish/2']);
  assert.match(logged[0], /^blocklist-phish v2 [0-9a-f]{64}$/);

  fetched.length = 0;
  const s = storage();
  const fromDelta = await ensureBlocklist({
    baseUrl: base,
    listId: 'phish',
    storage: s,
    fetch: counting,
    previous: { list: v1, sha256: '' },
  });
  assert.deepEqual(fetched, ['/blocklists', '/blocklists/phish/2/delta']);
  assert.equal(fromDelta.sha256, full.sha256); // the same pinned bytes as the full package
  assert.ok(s.data.has('blocklist-phish-v2'));

  // A provider (or network) that serves other bytes than it listed: refused, nothing stored.
  const tampering: typeof fetch = async (url, init) => {
    const r = await fetch(url, init);
    if (!new URL(String(url)).pathname.startsWith('/blocklists/')) return r;
    const b = new Uint8Array(await r.arrayBuffer());
    b[b.length - 1] ^= 1;
    return new Response(b, { status: r.status, headers: r.headers });
  };
  for (const previous of [undefined, { list: v1, sha256: '' }]) {
    const t = storage();
    await assert.rejects(
      ensureBlocklist({ baseUrl: base, listId: 'phish', storage: t, fetch: tampering, previous }),
      PackageIntegrityError,
    );
    assert.equal(t.data.size, 0);
  }
});
