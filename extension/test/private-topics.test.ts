// The worker's topic extraction against a real provider-server on loopback
// (both bundled models, real crypto), through the same typed calls the
// background makes: after the spam check, each message's topic goes to the
// provider (which records it); the replay log in IndexedDB refuses the same
// content under a new id; a topic request kept by a worker that stopped is
// resumed at the next call, or by an empty batch when the background
// starts; the opt-out is recorded by the provider and the worker then shares
// no topic at all.
import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { WebSocket } from 'ws';
import { loadTwentyNews } from '../../models/data/loaders.js';
import { startRealProvider, type RealProvider } from '../../provider-server/test/real-provider.js';
import fs from 'node:fs';
import path from 'node:path';
import { runClassification } from '../../client/core/runner.js';
import { ReplayLog } from '../../client/core/topic-replay.js';
import { topicConnector, type TopicResult } from '../../client/core/topic-session.js';
import { DirectoryStorage } from '../../client/node/node-storage.js';
import { tappedSocket } from '../../client/test/tapped-socket.js';
import { SCHEMAS } from '../../protocol/messages.js';
import { loadHe } from '../../wasm/ts/he.js';
import { resumeKeptTopics } from '../private/resume-kept.js';
import { accountOf, type ProviderConfig } from '../private/account.js';
import { PrivateStore } from '../private/store.js';
import { WorkerClient } from '../private/worker-client.js';
import type { ClassifyItem, WorkerEvent } from '../private/worker-protocol.js';
import { caughtSpam } from '../../e2e/fixtures/caught-spam.js';
import { inProcessWorker } from './worker-link.js';

let provider: RealProvider;
let user: { userId: number; token: string };
let settings: PrivateStore;
const posts = loadTwentyNews()
  .filter((e) => e.split === 'test')
  .slice(0, 7)
  .map((e) => e.raw as string);

before(async () => {
  provider = await startRealProvider({ models: ['spam', 'topics'] });
  user = await provider.store.addUser('topics-in-extension');
  (globalThis as { WebSocket?: unknown }).WebSocket = WebSocket; // the browser's, in the extension
  settings = await PrivateStore.open(); // the worker's own database
  await settings.setSettings({ topics: true }); // the user's answer when connecting (off until asked)
});
after(async () => {
  delete (globalThis as { WebSocket?: unknown }).WebSocket;
  settings.close();
  await provider.close();
});

async function classify(w: WorkerClient, items: ClassifyItem[]): Promise<WorkerEvent[]> {
  const events: WorkerEvent[] = [];
  for (const i of items) await provider.store.deliver(user.userId, i.messageId, 'Subject: x\r\n\r\n(ciphertext)');
  const p = { url: provider.server.httpUrl, token: user.token };
  await w.call({ kind: 'classify', provider: p, items }, (e) => void events.push(e));
  return events.filter((e) => e.event !== 'download');
}

const topicsOf = (events: WorkerEvent[]) =>
  events.flatMap((e) => (e.event === 'topic' ? [[e.topic.messageId, e.topic.kind]] : []));

describe('topic extraction in the extension worker', { timeout: 120_000 }, () => {
  const w = inProcessWorker();

  it('shares each checked message’s topic after its spam verdict; the provider records it', async () => {
    const events = await classify(w, [
      { messageId: 't1', raw: posts[0] },
      { messageId: 't2', raw: posts[1] },
    ]);
    assert.deepEqual(
      // (the link check's lines come between; they are private-blocklist.test.ts's)
      events.flatMap((e) =>
        e.event === 'outcome'
          ? [`verdict ${e.outcome.messageId}`]
          : e.event === 'topic'
            ? [`topic ${e.topic.messageId}`]
            : [],
      ),
      ['verdict t1', 'verdict t2', 'topic t1', 'topic t2'],
      'spam verdicts first, never held back by topics',
    );
    assert.deepEqual(topicsOf(events), [
      ['t1', 'shared'],
      ['t2', 'shared'],
    ]);
    for (const id of ['t1', 't2']) assert.notEqual(await provider.store.topicOf(user.userId, id), undefined);
    for (const e of events)
      if (e.event === 'topic')
        assert.deepEqual(
          Object.keys(e.topic).sort(),
          ['detail', 'kind', 'messageId'],
          'no topic value, no local guess',
        );
  });

  it('the same content under a new id is not fed again (replay log in IndexedDB)', async () => {
    const events = await classify(w, [{ messageId: 't3', raw: posts[0] }]);
    assert.deepEqual(topicsOf(events), [['t3', 'shared_before']]);
    assert.equal(await provider.store.isClassified(user.userId, 't3', 'topics'), false, 'nothing left the worker');
  });

  it('a message whose topic the provider already holds (another device shared it) shows as shared before', async () => {
    await provider.store.deliver(user.userId, 't9', 'Subject: x\r\n\r\n(ciphertext)');
    const claim = (await provider.store.claim(user.userId, 't9', 'topics', new Uint8Array(32))) as { attempt: Buffer };
    await provider.store.recordAnswer(user.userId, 't9', 'topics', claim.attempt, null);
    const events: WorkerEvent[] = [];
    const p = { url: provider.server.httpUrl, token: user.token };
    await w.call(
      { kind: 'classify', provider: p, items: [{ messageId: 't9', raw: posts[3] }] },
      (e) => void events.push(e),
    );
    assert.deepEqual(topicsOf(events), [['t9', 'shared_before']]);
  });

  /** Delivers `messageId`; its topic request leaves, the answer is lost and the browser closes: the request stays kept. */
  async function keepTopicRequest(p: ProviderConfig, messageId: string, raw: string): Promise<void> {
    await provider.store.deliver(user.userId, messageId, 'Subject: x\r\n\r\n(ciphertext)');
    const c = topicConnector({
      server: p.url,
      token: p.token,
      he: await loadHe(),
      storage: new DirectoryStorage(fs.mkdtempSync(path.join(provider.dir, 'client-'))),
      socket: tappedSocket({ drop: (type) => type === SCHEMAS.topic_gc.type }),
      replay: await ReplayLog.open(settings.replay),
      keptTopics: settings.keptTopicRequests(accountOf(p)),
    });
    let sessions = 0;
    await assert.rejects(
      runClassification<TopicResult>([{ id: messageId, raw: async () => raw }], {
        connect: (n) => (sessions++ === 0 ? c.connect(n) : Promise.reject(new Error('the browser closed'))),
        onOutcome: () => assert.fail('no outcome before the stop'),
      }),
      /the browser closed/,
    );
    assert.deepEqual(await settings.keptTopicIds(accountOf(p)), [messageId], 'kept in IndexedDB');
  }

  it('a topic request kept by a worker that stopped goes with the next call, though its message is long checked', async () => {
    const p = { url: provider.server.httpUrl, token: user.token };
    // Its spam verdict was stored; then its topic request was kept.
    await keepTopicRequest(p, 't5', posts[4]);
    // The next call is about another message; the kept topic is shared with its own.
    const events = await classify(w, [{ messageId: 't6', raw: posts[5] }]);
    assert.deepEqual(topicsOf(events), [
      ['t6', 'shared'],
      ['t5', 'shared'],
    ]);
    assert.notEqual(await provider.store.topicOf(user.userId, 't5'), undefined);
    assert.deepEqual(await settings.keptTopicIds(accountOf(p)), [], 'forgotten once shared');
  });

  it('a kept topic request is resumed when the background starts, with an empty batch; nothing is sent when none is kept', async () => {
    const p = { url: provider.server.httpUrl, token: user.token };
    await settings.setProvider(p);
    const batches: ClassifyItem[][] = [];
    let events: WorkerEvent[] = [];
    const start = () =>
      resumeKeptTopics(settings, async (_, items) => {
        batches.push(items);
        events = await classify(w, items);
      });
    assert.equal(await start(), false, 'nothing kept: the worker is not called');
    await keepTopicRequest(p, 't7', posts[6]);
    await settings.setSettings({ topics: false });
    assert.equal(await start(), false, 'topics off: nothing leaves');
    await settings.setSettings({ topics: true });
    assert.equal(await start(), true);
    assert.deepEqual(batches, [[]]);
    assert.deepEqual(topicsOf(events), [['t7', 'shared']]);
    assert.notEqual(await provider.store.topicOf(user.userId, 't7'), undefined);
    assert.deepEqual(await settings.keptTopicIds(accountOf(p)), []);
  });

  it('an opt-out is recorded by the provider, and the worker then shares no topic', async () => {
    const p = { url: provider.server.httpUrl, token: user.token };
    await w.call({ kind: 'topic-setting', provider: p, optOut: true });
    assert.equal(await provider.store.topicOptOut(user.userId), true);
    await settings.setSettings({ topics: false });
    try {
      const events = await classify(w, [{ messageId: 't4', raw: posts[2] }]);
      assert.equal(events.filter((e) => e.event === 'outcome').length, 1, 'the spam check still runs');
      assert.deepEqual(topicsOf(events), []);
      assert.equal(await provider.store.isClassified(user.userId, 't4', 'topics'), false);
    } finally {
      await settings.setSettings({ topics: true });
    }
    await w.call({ kind: 'topic-setting', provider: p, optOut: false });
    assert.equal(await provider.store.topicOptOut(user.userId), false);
  });

  it('spam is not topic-extracted: what goes to Junk has no topic the user reads', async () => {
    const [spam] = await caughtSpam(1);
    const events = await classify(w, [
      { messageId: 't-spam', raw: spam.raw as string },
      { messageId: 't-ham', raw: posts[1] + '\r\nAnother line, another message.' },
    ]);
    const verdicts = events.flatMap((e) =>
      e.event === 'outcome' && e.outcome.kind === 'verdict' ? [[e.outcome.messageId, e.outcome.spam]] : [],
    );
    assert.deepEqual(verdicts, [
      ['t-spam', true],
      ['t-ham', false],
    ]);
    assert.deepEqual(topicsOf(events), [['t-ham', 'shared']]);
    assert.equal(await provider.store.isClassified(user.userId, 't-spam', 'topics'), false, 'nothing left for it');
  });
});
