// Topic frames against the real provider (crypto workers, store, the bundled
// topic model and its candidate model): every malformed or out-of-order topic
// frame gets an error frame naming it, the session goes on and nothing is
// recorded; a valid evaluation records the topic once; opt-out; the claim
// left by a connection dropped between topic_gc and topic_labels.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { Message } from '../../protocol/messages.js';
import { argmaxChoice, evaluateArgmax } from '../../wasm/ts/gc.js';
import { heLayout, loadHe, topicCiphertexts, type He } from '../../wasm/ts/he.js';
import { loadConfig } from '../src/config.js';
import { topicNames } from '../src/models.js';
import { startProvider } from '../src/provider.js';
import { helloSession } from './harness.js';
import { BUNDLED_MODELS, startRealProvider, type RealProvider } from './real-provider.js';
import { LWE_VERSION, packedHeader } from '../../wasm/test/he/lwe-layout.js';

let provider: RealProvider;
let he: He;
let token: string;
let userId: number;

before(async () => {
  provider = await startRealProvider({
    models: ['topics', 'spam'],
    overrides: { limits: { hellosPerMinute: 1000, requestsPerMinute: 10_000 } },
  });
  ({ token, userId } = await provider.store.addUser('alice'));
  for (let i = 0; i < 20; i++) await provider.store.deliver(userId, `m-${i}`, `Subject: ${i}\r\n\r\nbody ${i}`);
  he = await loadHe();
});
after(() => provider.close());

const served = () => provider.catalog.current('topics')!;
const bPrime = () => served().topics!.bPrime;
const indexBits = () => Math.ceil(Math.log2(served().params.B));

function expectError(m: Message, code: string, mention?: string): void {
  assert.ok(m.name === 'error', `expected error ${code}, got ${m.name}`);
  assert.equal(m.code, code, m.message);
  if (mention) assert.match(m.message, new RegExp(mention));
}

/** A session on the topic model with OTs for a few emails. */
async function session(modelId = 'topics') {
  const modelVersion = provider.catalog.current(modelId)!.version;
  const { c, w, receiver } = await helloSession(
    provider.server.wsUrl,
    he,
    { token, modelId, modelVersion },
    { baseOts: true },
  );
  const ots = 4 * bPrime() * (served().params.T + indexBits());
  assert.equal((await c.request('ot', 3, { payload: receiver.extend(ots) })).name, 'ot_reply');
  return { c, w, receiver, next: 10 };
}

/**
 * Well-formed ciphertexts of zero (y = 0) for B' values, in the layout the
 * package calls for (one packed ciphertext when B' = B, else B' LWE
 * ciphertexts): what the provider decrypts does not matter here.
 */
function zeroLwes(): Uint8Array {
  const params = served().params;
  const { packed, bytes } = topicCiphertexts(params, bPrime());
  const out = new Uint8Array(bytes);
  if (packed) {
    out.set(packedHeader(params.Q, bPrime()));
  } else {
    const size = heLayout(params).lweBytes;
    for (let j = 0; j < bPrime(); j++) out.set([0x4c, LWE_VERSION, params.Q], j * size);
  }
  return out;
}

/** topic_request with candidates 0..B'−1 (or `indices`) → topic_gc; the labels the client would send back, the request and the topic_gc. */
async function requestTopic(
  s: Awaited<ReturnType<typeof session>>,
  messageId: string,
  indices = Array.from({ length: bPrime() }, (_, j) => j),
) {
  const { T } = served().params;
  const n = bPrime();
  const { message: choices, pending } = argmaxChoice(s.receiver, {
    rPrimes: new Array(n).fill(0),
    indices,
    T,
    indexBits: indexBits(),
  });
  const request = { messageId, lwes: zeroLwes(), choices };
  const reply = await s.c.request('topic_request', s.next++, request);
  assert.ok(reply.name === 'topic_gc', JSON.stringify(reply));
  return { labels: evaluateArgmax(pending, reply.gc), request, gc: reply.gc };
}

const requestGc = async (...args: Parameters<typeof requestTopic>) => (await requestTopic(...args)).labels;

test('a valid evaluation records the topic once; the same message again is already_classified', async () => {
  const s = await session();
  assert.equal(bytesToHex(s.w.candidatesSha256), served().topics!.candidatesSha256, 'welcome pins the candidates');
  const labels = await requestGc(s, 'm-0');
  const ack = await s.c.request('topic_labels', s.next++, { messageId: 'm-0', labels });
  assert.ok(ack.name === 'topic_ack' && ack.messageId === 'm-0', JSON.stringify(ack));
  // All y_j equal 0 and the masks are 0: the first maximum, candidate 0, wins.
  assert.equal(await provider.store.topicOf(userId, 'm-0'), 0);
  assert.equal(
    (await provider.store.userKey(userId, 'topics', served().version))!.used,
    bPrime(),
    'B′ decryptions spent',
  );
  const again = await s.c.request('topic_request', s.next++, {
    messageId: 'm-0',
    lwes: zeroLwes(),
    choices: new Uint8Array(1),
  });
  expectError(again, 'already_classified', 'm-0');
  // Spam and topic claims are independent.
  assert.equal(await provider.store.isClassified(userId, 'm-0', 'spam'), false);
  s.c.close();
});

test('bad topic_labels: wrong count, a label for no wire, an unknown message, out of order — named, nothing recorded', async () => {
  const s = await session();
  const pong = async () => {
    const p = await s.c.request('ping', s.next++, { nonce: 7 });
    assert.equal(p.name, 'pong', 'the session goes on');
  };
  // Labels before any request, and for a message never requested.
  expectError(
    await s.c.request('topic_labels', s.next++, { messageId: 'm-1', labels: new Uint8Array(83) }),
    'out_of_order',
    'm-1',
  );
  await pong();
  const labels = await requestGc(s, 'm-1');
  expectError(
    await s.c.request('topic_labels', s.next++, { messageId: 'never-sent', labels }),
    'out_of_order',
    'never-sent',
  );
  // Another request while labels are awaited.
  expectError(
    await s.c.request('topic_request', s.next++, { messageId: 'm-2', lwes: zeroLwes(), choices: new Uint8Array(1) }),
    'out_of_order',
    'topic_labels for message m-1',
  );
  // One label too few: the evaluation is used up, the message stays claimed, no topic.
  const short = labels.slice(0, labels.length - 16);
  short[2] = indexBits() - 1;
  expectError(
    await s.c.request('topic_labels', s.next++, { messageId: 'm-1', labels: short }),
    'bad_field',
    'number of output labels',
  );
  assert.equal(await provider.store.topicOf(userId, 'm-1'), undefined);
  assert.equal(await provider.store.isClassified(userId, 'm-1', 'topics'), true);
  await pong();

  // A label that is neither label of its wire.
  const forged = (await requestGc(s, 'm-2')).slice();
  forged[3 + 16 * 2] ^= 0x40;
  expectError(
    await s.c.request('topic_labels', s.next++, { messageId: 'm-2', labels: forged }),
    'bad_field',
    'not one of the garbler',
  );
  assert.equal(await provider.store.topicOf(userId, 'm-2'), undefined);
  // The decoder is used up: the right labels now are out of order.
  await pong();

  // Malformed requests: wrong ciphertext count, a bad ciphertext, a spam frame on the topic model.
  expectError(
    await s.c.request('topic_request', s.next++, {
      messageId: 'm-3',
      lwes: zeroLwes().subarray(1),
      choices: new Uint8Array(1),
    }),
    'bad_field',
    `expected ${topicCiphertexts(served().params, bPrime()).bytes}`,
  );
  const badLwe = zeroLwes();
  badLwe[1] = 9;
  expectError(
    await s.c.request('topic_request', s.next++, { messageId: 'm-3', lwes: badLwe, choices: new Uint8Array(1) }),
    'bad_field',
  );
  expectError(
    await s.c.request('topic_request', s.next++, { messageId: 'm-3', lwes: zeroLwes(), choices: new Uint8Array(5) }),
    'bad_field',
    'gc_choice',
  );
  expectError(
    await s.c.request('spam_request', s.next++, {
      messageId: 'm-3',
      lwe: new Uint8Array(9),
      choices: new Uint8Array(1),
    }),
    'out_of_order',
    'topic model',
  );
  expectError(
    await s.c.request('topic_request', s.next++, { messageId: 'nope', lwes: zeroLwes(), choices: new Uint8Array(1) }),
    'unknown_message',
    'nope',
  );
  await pong();
  assert.equal(await provider.store.topicOf(userId, 'm-3'), undefined);
  assert.equal(await provider.store.isClassified(userId, 'm-3', 'topics'), false, 'failed requests release the claim');
  // After all that, a valid evaluation still works in the same session.
  const ok = await requestGc(s, 'm-3');
  assert.equal((await s.c.request('topic_labels', s.next++, { messageId: 'm-3', labels: ok })).name, 'topic_ack');
  assert.equal(await provider.store.topicOf(userId, 'm-3'), 0);
  s.c.close();
});

test('a candidate index beyond the B topics (a lying client) is not recorded, and acknowledged like any other', async () => {
  const s = await session();
  const labels = await requestGc(s, 'm-7', new Array(bPrime()).fill(2 ** indexBits() - 1));
  // An error would tell the client where the argmax landed: the answer is the same as for a valid topic.
  const ack = await s.c.request('topic_labels', s.next++, { messageId: 'm-7', labels });
  assert.ok(ack.name === 'topic_ack', JSON.stringify(ack));
  assert.equal(await provider.store.topicOf(userId, 'm-7'), undefined);
  assert.equal(await provider.store.isClassified(userId, 'm-7', 'topics'), true);
  s.c.close();
});

test('topic frames on a spam session are out of order', async () => {
  const s = await session('spam');
  assert.equal(s.w.candidatesSha256.length, 0);
  expectError(
    await s.c.request('topic_request', s.next++, { messageId: 'm-4', lwes: zeroLwes(), choices: new Uint8Array(1) }),
    'out_of_order',
    'spam model',
  );
  s.c.close();
});

test('opt-out is recorded per user and refuses topic requests; opting back in works', async () => {
  const s = await session();
  const ack = await s.c.request('topic_setting', s.next++, { optOut: 1 });
  assert.ok(ack.name === 'topic_setting_ack' && ack.optOut === 1);
  assert.equal(await provider.store.topicOptOut(userId), true);
  expectError(
    await s.c.request('topic_request', s.next++, { messageId: 'm-5', lwes: zeroLwes(), choices: new Uint8Array(1) }),
    'opted_out',
  );
  assert.equal(await provider.store.isClassified(userId, 'm-5', 'topics'), false);
  expectError(await s.c.request('topic_setting', s.next++, { optOut: 2 }), 'bad_field');
  assert.equal((await s.c.request('topic_setting', s.next++, { optOut: 0 })).name, 'topic_setting_ack');
  assert.equal(await provider.store.topicOptOut(userId), false);
  const labels = await requestGc(s, 'm-5');
  assert.equal((await s.c.request('topic_labels', s.next++, { messageId: 'm-5', labels })).name, 'topic_ack');
  s.c.close();
});

test('after a connection dropped between topic_gc and topic_labels, a new topic_request is already_classified and labels alone are out of order', async () => {
  const s = await session();
  await requestGc(s, 'm-6');
  s.c.close();
  await s.c.waitClosed();
  const t = await session();
  expectError(
    await t.c.request('topic_request', t.next++, { messageId: 'm-6', lwes: zeroLwes(), choices: new Uint8Array(1) }),
    'already_classified',
  );
  expectError(
    await t.c.request('topic_labels', t.next++, { messageId: 'm-6', labels: new Uint8Array(83) }),
    'out_of_order',
  );
  assert.equal(await provider.store.topicOf(userId, 'm-6'), undefined);
  t.c.close();
});

test('exactly once: a topic_gc lost with its connection comes again by topic_resend, byte for byte, and its labels decode in the next session, once', async () => {
  const s = await session();
  const { labels, request, gc } = await requestTopic(s, 'm-10');
  s.c.close();
  await s.c.waitClosed();
  const t = await session();
  expectError(
    await t.c.request('topic_resend', t.next++, { ...request, choices: request.choices.map((b) => b ^ 1) }),
    'already_classified',
    'another request',
  );
  const again = await t.c.request('topic_resend', t.next++, request);
  assert.ok(again.name === 'topic_gc' && again.messageId === 'm-10', JSON.stringify(again));
  assert.deepEqual(again.gc, gc, 'the recorded topic_gc, not a new garbling');
  const ack = await t.c.request('topic_labels', t.next++, { messageId: 'm-10', labels });
  assert.ok(ack.name === 'topic_ack', JSON.stringify(ack));
  assert.equal(await provider.store.topicOf(userId, 'm-10'), 0);
  // Used: neither the same request nor a new one gets another evaluation.
  expectError(await t.c.request('topic_resend', t.next++, request), 'already_classified');
  expectError(await t.c.request('topic_request', t.next++, request), 'already_classified');
  // Nothing to resend for a message never requested, or never delivered.
  expectError(await t.c.request('topic_resend', t.next++, { ...request, messageId: 'm-12' }), 'not_answered');
  expectError(await t.c.request('topic_resend', t.next++, { ...request, messageId: 'nope' }), 'unknown_message');
  t.c.close();
});

test('labels that do not decode use the recorded answer up: a resend is then already_classified, no topic', async () => {
  const s = await session();
  const { labels, request } = await requestTopic(s, 'm-11');
  labels[labels.length - 1] ^= 1;
  expectError(await s.c.request('topic_labels', s.next++, { messageId: 'm-11', labels }), 'bad_field');
  s.c.close();
  const t = await session();
  expectError(await t.c.request('topic_resend', t.next++, request), 'already_classified');
  assert.equal(await provider.store.topicOf(userId, 'm-11'), undefined);
  t.c.close();
});

test('the candidate model is served like the package: ETag, Range, pinned hash', async () => {
  const t = served().topics!;
  const url = `${provider.server.httpUrl}/models/topics/${served().version}/candidates`;
  const full = await fetch(url);
  assert.equal(full.status, 200);
  assert.equal(full.headers.get('etag'), `"${t.candidatesSha256}"`);
  assert.equal(full.headers.get('x-content-sha256'), t.candidatesSha256);
  assert.equal((await full.arrayBuffer()).byteLength, t.candidatesBytes);
  const part = await fetch(url, { headers: { range: 'bytes=10-19' } });
  assert.equal(part.status, 206);
  assert.equal((await part.arrayBuffer()).byteLength, 10);
  assert.equal((await fetch(url, { headers: { 'if-none-match': `"${t.candidatesSha256}"` } })).status, 304);
  const list = (await (await fetch(`${provider.server.httpUrl}/models`)).json()) as {
    models: { id: string; candidates?: { sha256: string } }[];
  };
  assert.equal(list.models.find((m) => m.id === 'topics')?.candidates?.sha256, t.candidatesSha256);
  assert.equal(list.models.find((m) => m.id === 'spam')?.candidates, undefined);
  assert.equal((await fetch(`${provider.server.httpUrl}/models/spam/1/candidates`)).status, 404);
});

function bytesToHex(b: Uint8Array): string {
  return Buffer.from(b).toString('hex');
}

test('what the provider sees: per-topic counts and a user history, with topic names', async () => {
  const counts = (await provider.store.topicCounts()).filter((r) => r.modelId === 'topics');
  assert.ok(counts.length > 0);
  assert.equal(
    counts.reduce((n, r) => n + r.count, 0),
    (await provider.store.topicHistory(userId)).length,
  );
  const names = topicNames(provider.config.dataDir);
  assert.equal(names('topics', served().version)[0], 'alt.atheism');
  assert.deepEqual(names('nope', 1), []);
  assert.ok((await provider.store.topicHistory(userId)).some((h) => h.messageId === 'm-0' && h.topic === 0));
});

test('a user-key budget below B′ stops the start instead of failing every topic request', async () => {
  const config = loadConfig({
    env: {},
    overrides: {
      port: 0,
      dataDir: provider.config.dataDir,
      workers: 1,
      models: [{ id: 'topics', file: BUNDLED_MODELS.topics }],
      limits: { userKeyBudget: 10 },
    },
  });
  await assert.rejects(startProvider(config, { log: () => undefined, progress: () => undefined }), /bPrime.*10/);
});
