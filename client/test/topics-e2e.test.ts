// Private topic extraction end to end with the real crypto: provider-server
// (worker pool, lattice decryption, garbled argmax, label check) and the
// headless client over WebSocket, on a sample of 20 Newsgroups test posts.
// What the provider records must be the quantized plaintext decomposed topic
// (Pretzel §4.3: the private model's best column among the public model's B'
// candidates) for every message. Also: the replay log, opt-out.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { after, before, test } from 'node:test';
import { loadTwentyNews } from '../../models/data/loaders.js';
import { extractFeatures, validateSpec } from '../../models/features/index.js';
import { decomposedTopic, loadPlainModel } from '../../models/plain/index.js';
import { ProtocolError } from '../../protocol/errors.js';
import { BUNDLED_MODELS, startRealProvider, type RealProvider } from '../../provider-server/test/real-provider.js';
import { loadHe, topicCiphertexts, type He } from '../../wasm/ts/he.js';
import { SCHEMAS } from '../../protocol/messages.js';
import { USER_KEY_BUDGET_MAX } from '../../provider-server/src/limits.js';
import type { SocketFactory } from '../core/provider-session.js';
import { nodeSocket } from '../node/cli.js';
import { frameType, tappedSocket } from './tapped-socket.js';
import { KOS_EXTRA } from '../../wasm/ts/ot-pool.js';
import { DirectoryStorage } from '../node/node-storage.js';
import { runClassification, type RunOutcome } from '../core/runner.js';
import { MemoryReplayStore, ReplayLog, ReplayRefused } from '../core/topic-replay.js';
import { topicConnector, type TopicResult } from '../core/topic-session.js';
import { topicJournal, type KeptTopicRequest, type KeptTopicRequests } from '../core/kept-requests.js';

const MODEL = BUNDLED_MODELS.topics;
const CANDIDATES = path.resolve('models/default/topics-candidates.pmfm');
/** Every STRIDE-th 20 Newsgroups test post: 7,532 / 15 → 503 messages. */
const STRIDE = 15;
let provider: RealProvider;
let he: He;
let token: string;
let userId: number;
const mails: { id: string; label: string; raw: string }[] = [];

before(async () => {
  provider = await startRealProvider({ models: ['topics'], overrides: { limits: { requestsPerMinute: 100_000 } } });
  ({ token, userId } = await provider.store.addUser('topics-e2e'));
  he = await loadHe();
  const held = loadTwentyNews().filter((e) => e.split === 'test');
  for (const e of held.filter((_, i) => i % STRIDE === 0)) {
    const id = `20news-${e.id}`;
    await provider.store.deliver(userId, id, `Subject: encrypted\r\n\r\n(ciphertext)`);
    mails.push({ id, label: e.label, raw: e.raw as string });
  }
});
after(() => provider.close());

function connector(
  replay: ReplayLog,
  cache = 'cache',
  p = provider,
  userToken = token,
  socket = nodeSocket,
  keptTopics?: KeptTopicRequests,
) {
  return topicConnector({
    server: p.server.httpUrl,
    token: userToken,
    he,
    storage: new DirectoryStorage(path.join(p.dir, cache)),
    socket,
    replay,
    keptTopics,
  });
}

/** The quantized plaintext decomposed topic of a message: what the provider must record. */
async function plaintextTopic(raw: string): Promise<number> {
  const model = loadPlainModel(new Uint8Array(fs.readFileSync(MODEL)));
  const publicModel = loadPlainModel(new Uint8Array(fs.readFileSync(CANDIDATES)));
  const spec = validateSpec(model.header.featureSpec);
  return decomposedTopic(
    model,
    publicModel,
    await extractFeatures(raw, spec),
    provider.catalog.current('topics')!.topics!.bPrime,
  );
}

/**
 * Classifies `sample` through `p` and checks every recorded topic against the
 * plaintext decomposed topic. With `socket` breaking connections, a message
 * whose labels were decoded but whose topic_ack was lost ends as
 * already_classified on the client; its topic is checked the same way.
 */
async function privateEqualsPlain(
  p: RealProvider,
  user: { token: string; userId: number },
  sample: typeof mails,
  socket?: SocketFactory,
) {
  const replay = await ReplayLog.open(new MemoryReplayStore());
  const c = connector(replay, 'cache', p, user.token, socket);
  const outcomes: RunOutcome<TopicResult>[] = [];
  await runClassification<TopicResult>(
    sample.map((m) => ({ id: m.id, raw: async () => m.raw })),
    { connect: (n) => c.connect(n), onOutcome: (o) => void outcomes.push(o) },
  );
  assert.equal(outcomes.length, sample.length);
  const model = loadPlainModel(new Uint8Array(fs.readFileSync(MODEL)));
  const publicModel = loadPlainModel(new Uint8Array(fs.readFileSync(CANDIDATES)));
  const spec = validateSpec(model.header.featureSpec);
  const served = p.catalog.current('topics')!;
  const bPrime = served.topics!.bPrime;
  let agree = 0;
  let correct = 0;
  let fed = 0;
  for (const m of sample) {
    const o = outcomes.find((x) => x.messageId === m.id)!;
    // 20 Newsgroups has posts with identical features (cross-posts): the replay log feeds one of them only.
    if (o.kind === 'replay_refused') {
      assert.match(o.detail, /content of an email already fed/);
      continue;
    }
    if (!(socket && o.kind === 'already_classified')) assert.equal(o.kind, 'verdict', JSON.stringify(o));
    fed++;
    const expected = decomposedTopic(model, publicModel, await extractFeatures(m.raw, spec), bPrime);
    const got = await p.store.topicOf(user.userId, m.id);
    if (got === expected) agree++;
    if (model.header.labels[got ?? -1] === m.label) correct++;
  }
  assert.ok(fed >= sample.length * 0.8, `${fed} posts fed`);
  assert.equal(agree, fed, 'private = plaintext on every message');
  const v = outcomes.filter((o) => o.kind === 'verdict') as ({ kind: 'verdict' } & TopicResult)[];
  const mean = (f: (o: TopicResult) => number) => v.reduce((s, o) => s + f(o), 0) / v.length;
  const layout = topicCiphertexts(served.params, bPrime).packed ? 'one packed ciphertext' : `${bPrime} LWE ciphertexts`;
  console.log(
    `${fed} posts (${sample.length - fed} refused as replays), B' = ${bPrime} (${layout}): private = plaintext ${agree}/${fed}, accuracy ${(correct / fed).toFixed(3)}; ` +
      `per email: sent ${mean((o) => o.bytesSent).toFixed(0)} B, received ${mean((o) => o.bytesReceived).toFixed(0)} B, client ${mean((o) => o.clientMs).toFixed(1)} ms`,
  );
}

test(`private topic = quantized plaintext decomposed topic on every sampled 20 Newsgroups test post`, async () => {
  await privateEqualsPlain(provider, { token, userId }, mails);
});

test("with B' = 5 of the 20 topics (a secret candidate set: one LWE ciphertext per candidate), private = plaintext", async () => {
  const narrow = await startRealProvider({
    models: ['topics'],
    overrides: {
      models: [{ id: 'topics', file: MODEL, bPrime: 5 }],
      limits: { requestsPerMinute: 100_000 },
    },
  });
  try {
    const user = await narrow.store.addUser('topics-e2e-narrow');
    for (const m of mails.slice(0, 60))
      await narrow.store.deliver(user.userId, m.id, 'Subject: encrypted\r\n\r\n(ciphertext)');
    await privateEqualsPlain(narrow, user, mails.slice(0, 60));
  } finally {
    await narrow.close();
  }
});

/**
 * nodeSocket breaking its connection where a topic can be lost: right after a
 * topic_request left (the provider may or may not record its answer), when a
 * topic_gc arrives (recorded, never seen) and right after topic_labels left
 * (the topic_ack is lost). At about a third of those moments, picked by a
 * fixed-seed generator so that every run drops at the same moments,
 * `plan.left` times.
 */
function droppingSocket(plan: { left: number; seed: number; dropped: string[] }): SocketFactory {
  const due = (what: string) => {
    plan.seed = (plan.seed * 1103515245 + 12345) % 2 ** 31;
    if (plan.left === 0 || plan.seed % 3 !== 0) return false;
    plan.left--;
    plan.dropped.push(what);
    return true;
  };
  return tappedSocket({
    sent: (type, close) => {
      if (type === SCHEMAS.topic_request.type && due('request')) close();
      if (type === SCHEMAS.topic_labels.type && due('labels')) close();
    },
    drop: (type) => type === SCHEMAS.topic_gc.type && due('topic_gc'),
  });
}

test('connections lost where a topic can be lost (request sent, topic_gc on its way, labels sent): every message gets its topic once', async () => {
  const p = await startRealProvider({ models: ['topics'], overrides: { limits: { requestsPerMinute: 100_000 } } });
  try {
    const user = await p.store.addUser('topics-e2e-drops');
    const sample = mails.slice(0, 36);
    for (const m of sample) await p.store.deliver(user.userId, m.id, 'Subject: encrypted\r\n\r\n(ciphertext)');
    const plan = { left: 12, seed: 7, dropped: [] as string[] };
    await privateEqualsPlain(p, user, sample, droppingSocket(plan));
    for (const what of ['request', 'topic_gc', 'labels']) assert.ok(plan.dropped.includes(what), `${plan.dropped}`);
    for (const m of sample) assert.notEqual(await p.store.topicOf(user.userId, m.id), undefined, `${m.id} has a topic`);
  } finally {
    await p.close();
  }
});

/** A device's kept topic requests, in memory (structured clones, as IndexedDB keeps them); `stopAt` throws once it is stored. */
function keptTopicsInMemory(stopAt?: (k: KeptTopicRequest) => boolean) {
  const records = new Map<string, KeptTopicRequest>();
  const kept: KeptTopicRequests & { records: typeof records } = {
    records,
    get: async (id) => records.get(id),
    put: async (id, k) => {
      records.set(id, structuredClone(k));
      if (stopAt?.(k)) throw new Error('the client stopped');
    },
    delete: async (id) => void records.delete(id),
  };
  return kept;
}

type User = { token: string; userId: number };

/** One run over one message as a client that stops (nothing in memory survives); rejects with "the client stopped". */
async function stoppingRun(
  user: User,
  id: string,
  raw: string,
  replay: MemoryReplayStore,
  kept?: KeptTopicRequests,
  dropGc = true,
) {
  const socket = tappedSocket({ drop: (type) => dropGc && type === SCHEMAS.topic_gc.type });
  const c = connector(await ReplayLog.open(replay), 'cache-kept', provider, user.token, socket, kept);
  let sessions = 0;
  await assert.rejects(
    runClassification<TopicResult>([{ id, raw: async () => raw }], {
      connect: (n) => (sessions++ === 0 ? c.connect(n) : Promise.reject(new Error('the client stopped'))),
      onOutcome: () => Promise.reject(new Error('the client stopped')),
    }),
    /the client stopped/,
  );
}

/** The next run (a restarted client: its replay log read again), the message itself no longer at hand unless given. */
async function nextTopicRun(user: User, id: string, replay: MemoryReplayStore, kept?: KeptTopicRequests, raw?: string) {
  const sent: (number | undefined)[] = [];
  const socket = tappedSocket({ sent: (type) => void sent.push(type) });
  const c = connector(await ReplayLog.open(replay), 'cache-kept', provider, user.token, socket, kept);
  const outcomes: RunOutcome<TopicResult>[] = [];
  await runClassification<TopicResult>(
    [{ id, raw: async () => raw ?? Promise.reject(new Error('the message is not at hand')) }],
    {
      connect: (n) => c.connect(n),
      journal: kept && topicJournal(he.core, kept),
      onOutcome: (o) => void outcomes.push(o),
    },
  );
  return { kinds: outcomes.map((o) => o.kind), sent };
}

test('a client that stops while its topic_gc is on the way shares the topic at its next run, from the request it kept', async () => {
  // A fresh user: one whose key budget earlier tests used up would reconnect (key_rotated) before sending.
  const user = await provider.store.addUser('topics-e2e-kept');
  const [a, b] = [mails[3], mails[4]];
  for (const m of [a, b])
    await provider.store.deliver(user.userId, `kept-${m.id}`, 'Subject: encrypted\r\n\r\n(ciphertext)');
  const replay = new MemoryReplayStore();
  const kept = keptTopicsInMemory();

  await stoppingRun(user, `kept-${a.id}`, a.raw, replay, kept);
  assert.equal(
    await provider.store.isClassified(user.userId, `kept-${a.id}`, 'topics'),
    true,
    'the provider recorded its answer',
  );
  assert.equal(kept.records.size, 1, 'the request was kept before it left');
  assert.equal(kept.records.get(`kept-${a.id}`)?.answer, undefined, 'its answer never arrived');
  // The message itself is not needed: the kept request is sent again and the recorded answer evaluated.
  const run = await nextTopicRun(user, `kept-${a.id}`, replay, kept);
  assert.deepEqual(run.kinds, ['verdict']);
  assert.ok(run.sent.includes(SCHEMAS.topic_resend.type) && !run.sent.includes(SCHEMAS.topic_request.type));
  assert.equal(await provider.store.topicOf(user.userId, `kept-${a.id}`), await plaintextTopic(a.raw));
  assert.equal(kept.records.size, 0, 'forgotten once the outcome is stored');

  // The same stop without a kept request: the email was fed, so it is refused, and its topic never shared.
  await stoppingRun(user, `kept-${b.id}`, b.raw, replay);
  assert.deepEqual((await nextTopicRun(user, `kept-${b.id}`, replay, kept, b.raw)).kinds, ['replay_refused']);
  assert.equal(await provider.store.topicOf(user.userId, `kept-${b.id}`), undefined);
});

test('a topic_gc that arrived before the stop is evaluated from the device, never the resend’s; a damaged one is dropped', async () => {
  const user = await provider.store.addUser('topics-e2e-answered');
  const [a, b] = [mails[5], mails[6]];
  for (const m of [a, b])
    await provider.store.deliver(user.userId, `answered-${m.id}`, 'Subject: encrypted\r\n\r\n(ciphertext)');
  const replay = new MemoryReplayStore();
  // Stops right after the answer was kept, before it is evaluated and its labels leave.
  const kept = keptTopicsInMemory((k) => k.answer !== undefined);
  await stoppingRun(user, `answered-${a.id}`, a.raw, replay, kept, false);
  assert.ok(kept.records.get(`answered-${a.id}`)?.answer, 'the answer was kept before it was evaluated');
  const resumed = keptTopicsInMemory();
  for (const [id, k] of kept.records) await resumed.put(id, k);
  const run = await nextTopicRun(user, `answered-${a.id}`, replay, resumed);
  assert.deepEqual(run.kinds, ['verdict']);
  assert.equal(await provider.store.topicOf(user.userId, `answered-${a.id}`), await plaintextTopic(a.raw));
  assert.equal(resumed.records.size, 0);

  // A kept answer that no longer evaluates fails the run even though the provider's resend would: the
  // kept one is what is evaluated. It is dropped, so the next run is not stuck on it.
  await stoppingRun(user, `answered-${b.id}`, b.raw, replay, kept, false);
  const damaged = keptTopicsInMemory();
  for (const [id, k] of kept.records) if (id === `answered-${b.id}`) await damaged.put(id, k);
  damaged.records.get(`answered-${b.id}`)!.answer![0] ^= 0xff; // no longer a gc_argmax
  await assert.rejects(nextTopicRun(user, `answered-${b.id}`, replay, damaged), /gc_argmax/);
  assert.equal(damaged.records.size, 0, 'dropped');
  assert.equal(await provider.store.topicOf(user.userId, `answered-${b.id}`), undefined);
});

test('a topic request the device cannot keep is not sent, and its email may be asked about again', async () => {
  const user = await provider.store.addUser('topics-e2e-unkept');
  const m = mails[7];
  await provider.store.deliver(user.userId, 'unkept-1', 'Subject: encrypted\r\n\r\n(ciphertext)');
  const replay = await ReplayLog.open(new MemoryReplayStore());
  const full: KeptTopicRequests = {
    get: async () => undefined,
    put: () => Promise.reject(new Error('QuotaExceededError')),
    delete: async () => {},
  };
  const run = (kept: KeptTopicRequests) => {
    const c = connector(replay, 'cache-unkept', provider, user.token, nodeSocket, kept);
    const outcomes: RunOutcome<TopicResult>[] = [];
    return runClassification<TopicResult>([{ id: 'unkept-1', raw: async () => m.raw }], {
      connect: (n) => c.connect(n),
      journal: topicJournal(he.core, kept),
      onOutcome: (o) => void outcomes.push(o),
    }).then(() => outcomes.map((o) => o.kind));
  };
  await assert.rejects(run(full), /QuotaExceededError/);
  assert.equal(await provider.store.isClassified(user.userId, 'unkept-1', 'topics'), false, 'nothing was sent');
  assert.deepEqual(await run(keptTopicsInMemory()), ['verdict'], 'not refused as fed');
  assert.equal(await provider.store.topicOf(user.userId, 'unkept-1'), await plaintextTopic(m.raw));
});

test('a provider saying it never answered a request whose topic_gc the client evaluated is not believed: the email is not fed again', async () => {
  const user = await provider.store.addUser('topics-e2e-not-answered');
  await provider.store.deliver(user.userId, 'lie-1', 'Subject: encrypted\r\n\r\n(ciphertext)');
  let dropped = false;
  // The topic_ack is lost, then the claim disappears: the resend is answered not_answered.
  const socket = tappedSocket({
    sent: (type, close) => {
      if (type === SCHEMAS.topic_labels.type && !dropped) {
        dropped = true;
        close();
      }
    },
  });
  const c = connector(await ReplayLog.open(new MemoryReplayStore()), 'cache-lie', provider, user.token, socket);
  const outcomes: RunOutcome<TopicResult>[] = [];
  let connects = 0;
  await runClassification<TopicResult>([{ id: 'lie-1', raw: async () => mails[0].raw }], {
    connect: async (n) => {
      if (connects++ === 1) {
        const db = new Database(path.join(provider.dir, 'data', 'store.db'));
        db.prepare("DELETE FROM classified WHERE message_id = 'lie-1'").run();
        db.close();
      }
      return c.connect(n);
    },
    onOutcome: (o) => void outcomes.push(o),
  });
  assert.ok(dropped && connects === 2, `dropped ${dropped}, ${connects} sessions`);
  assert.deepEqual(
    outcomes.map((o) => o.kind),
    ['replay_refused'],
  );
  assert.equal(await provider.store.isClassified(user.userId, 'lie-1', 'topics'), false, 'no new request was sent');
});

test('a topic request refused with key_rotated after it left is asked again under the next key, not refused as fed', async () => {
  const user = await provider.store.addUser('topics-e2e-rotated');
  const m = mails[8];
  await provider.store.deliver(user.userId, 'rotated-1', 'Subject: encrypted\r\n\r\n(ciphertext)');
  const version = provider.catalog.current('topics')!.version;
  const sent: (number | undefined)[] = [];
  const socket = tappedSocket({ sent: (type) => void sent.push(type) });
  const c = connector(await ReplayLog.open(new MemoryReplayStore()), 'cache-rotated', provider, user.token, socket);
  const outcomes: RunOutcome<TopicResult>[] = [];
  let connects = 0;
  await runClassification<TopicResult>([{ id: 'rotated-1', raw: async () => m.raw }], {
    connect: async (n) => {
      const s = await c.connect(n);
      if (connects++ === 0) {
        // Another session of this user uses the key up after this one's welcome: the
        // request passes the client's count of its budget and is refused once it left.
        const key = (await provider.store.userKey(user.userId, 'topics', version))!;
        const rest = USER_KEY_BUDGET_MAX - key.used;
        await provider.store.spendUserKey(key.salt, 'topics', version, key.epoch, USER_KEY_BUDGET_MAX, rest);
      }
      return s;
    },
    onOutcome: (o) => void outcomes.push(o),
  });
  assert.equal(sent.filter((t) => t === SCHEMAS.topic_request.type).length, 2, 'refused once, then asked again');
  assert.equal((await provider.store.userKey(user.userId, 'topics', version))!.epoch, 2, 'under the next key');
  assert.deepEqual(
    outcomes.map((o) => o.kind),
    ['verdict'],
  );
  assert.equal(await provider.store.topicOf(user.userId, 'rotated-1'), await plaintextTopic(m.raw));
});

test('a topic session announced for many emails sets up OTs only for the emails its user key serves', async () => {
  const user = await provider.store.addUser('topics-e2e-ots');
  await provider.store.deliver(user.userId, 'ots-1', 'Subject: encrypted\r\n\r\n(ciphertext)');
  const otFrames: number[] = [];
  const socket: SocketFactory = (url) => {
    const ws = nodeSocket(url);
    const send = ws.send.bind(ws);
    ws.send = (data) => {
      if (frameType(data) === SCHEMAS.ot.type) otFrames.push((data as Uint8Array).byteLength);
      send(data);
    };
    return ws;
  };
  const c = connector(await ReplayLog.open(new MemoryReplayStore()), 'cache-ots', provider, user.token, socket);
  const outcomes: RunOutcome<TopicResult>[] = [];
  await runClassification<TopicResult>([{ id: 'ots-1', raw: async () => mails[9].raw }], {
    connect: (n) => c.connect(n + 999), // a backlog's session: many emails announced
    onOutcome: (o) => void outcomes.push(o),
  });
  assert.deepEqual(
    outcomes.map((o) => o.kind),
    ['verdict'],
  );
  const m = c.model()!;
  const emails = Math.floor(USER_KEY_BUDGET_MAX / m.bPrime);
  // A KOS extension carries 16 bytes per OT (KOS_EXTRA more, in batches of 512); the first frame is the base OT.
  const extended = otFrames.slice(1).reduce((a, b) => a + b, 0);
  const needed = emails * m.bPrime * (m.params.T + m.indexBits);
  assert.ok(extended >= 16 * needed, `${extended} bytes of OT extension for ${needed} OTs`);
  assert.ok(
    extended <= 16 * (needed + KOS_EXTRA + 512) + 1024,
    `${extended} bytes of OT extension, ${needed} OTs needed`,
  );
});

test('the replay log refuses an email fed before, by message id and by content, across restarts', async () => {
  const store = new MemoryReplayStore();
  const first = await ReplayLog.open(store);
  const [a, b] = mails.slice(0, 2);
  await provider.store.deliver(userId, 'replay-1', 'Subject: x\r\n\r\ny');
  await provider.store.deliver(userId, 'replay-2', 'Subject: x\r\n\r\ny');
  const s = await connector(first, 'cache-replay').connect(2);
  try {
    await s.classify('replay-1', a.raw);
    // The provider re-delivers the same content under a new id: refused before anything is sent.
    await assert.rejects(s.classify('replay-2', a.raw), (e) => e instanceof ReplayRefused && e.reason === 'content');
    assert.equal(await provider.store.isClassified(userId, 'replay-2', 'topics'), false, 'nothing left the client');
    // Another client process with the same log: the id is refused too.
    const second = await ReplayLog.open(store);
    await assert.rejects(
      second.admit({ messageId: 'replay-1', contentHash: '00'.repeat(32) }),
      (e) => e instanceof ReplayRefused && e.reason === 'message_id',
    );
    assert.equal(store.entries.length, 1);
    void b;
  } finally {
    s.close();
  }
});

test('allowRetry lets exactly one new request go for that id and content, in this process only', async () => {
  const store = new MemoryReplayStore();
  const log = await ReplayLog.open(store);
  const entry = { messageId: 'retry-1', contentHash: 'ab'.repeat(32) };
  await log.admit(entry);
  log.allowRetry({ ...entry, contentHash: 'cd'.repeat(32) }); // another content: no retry for this one
  assert.throws(() => log.check(entry), ReplayRefused);
  log.allowRetry(entry);
  log.check(entry);
  await log.admit(entry);
  assert.throws(() => log.check(entry), ReplayRefused, 'once');
  assert.equal(store.entries.length, 1, 'logged once');
  log.allowRetry(entry);
  const restarted = await ReplayLog.open(store);
  assert.throws(() => restarted.check(entry), ReplayRefused, 'not across a restart');
});

test('opt-out through the client: the provider refuses topic requests until the user opts back in', async () => {
  await provider.store.deliver(userId, 'opt-1', 'Subject: x\r\n\r\ny');
  await provider.store.deliver(userId, 'opt-2', 'Subject: x\r\n\r\ny');
  const s = await connector(await ReplayLog.open(new MemoryReplayStore()), 'cache-opt').connect(1);
  try {
    await s.setOptOut(true);
    assert.equal(await provider.store.topicOptOut(userId), true);
    await assert.rejects(
      s.classify('opt-1', mails[2].raw),
      (e) => e instanceof ProtocolError && e.code === 'opted_out',
    );
    assert.equal(await provider.store.isClassified(userId, 'opt-1', 'topics'), false);
    await s.setOptOut(false);
    await s.classify('opt-2', mails[3].raw);
    assert.notEqual(await provider.store.topicOf(userId, 'opt-2'), undefined);
  } finally {
    s.close();
  }
});
