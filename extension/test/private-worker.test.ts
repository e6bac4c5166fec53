// The glue between the background and the WASM worker: typed calls over a
// link (worker-client.ts ↔ worker-service.ts, in one process here), failures
// named for the user, and the background's queue (stored verdicts, batching,
// one failure told to every waiting message).
import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PackageIntegrityError } from '../../client/core/download.js';
import { ConnectionClosed } from '../../client/core/interrupted-request.js';
import { ProtocolError } from '../../protocol/errors.js';
import { BLOCKLISTED, isOutcome, type SpamBadge } from '../private/faults.js';
import { SpamQueue, type QueueDeps } from '../private/spam-queue.js';
import { accountOf } from '../private/account.js';
import { PrivateStore } from '../private/store.js';
import { WorkerCallError, WorkerClient } from '../private/worker-client.js';
import type { ClassifyItem, WorkerEnvelope, WorkerEvent } from '../private/worker-protocol.js';
import { toFailure } from '../private/worker-service.js';
import { inProcessWorker } from './worker-link.js';

describe('worker glue', () => {
  it('answers typed calls, and names an unreachable provider for the user', async () => {
    const client = inProcessWorker();
    assert.equal(await client.call({ kind: 'reset' }), null);
    await assert.rejects(
      client.call({ kind: 'prepare', provider: { url: 'http://127.0.0.1:9', token: 't' } }),
      (e: unknown) => e instanceof WorkerCallError && e.failure.code === 'provider_unreachable',
    );
  });

  it('with the spam check turned off, the worker refuses before any request leaves', async () => {
    const sent: string[] = [];
    const realFetch = globalThis.fetch;
    globalThis.fetch = (async (input: URL | RequestInfo) => {
      sent.push(String(input));
      throw new TypeError('no network in this test');
    }) as typeof fetch;
    (globalThis as { WebSocket?: unknown }).WebSocket = class {
      constructor(url: string) {
        sent.push(url);
        throw new Error('no sockets in this test');
      }
    };
    const settings = await PrivateStore.open(); // the worker's own database
    try {
      await settings.setSettings({ spamCheck: false });
      const client = inProcessWorker();
      const items = [{ messageId: 'm1', raw: 'Subject: hi\r\n\r\nbuy now' }];
      await assert.rejects(
        client.call({ kind: 'classify', provider: { url: 'http://127.0.0.1:9', token: 't' }, items }),
        (e: unknown) => e instanceof WorkerCallError && e.failure.code === 'spam_off',
      );
      assert.deepEqual(sent, [], 'nothing was fetched or connected');
      await settings.setSettings({ spamCheck: true });
      await assert.rejects(
        client.call({ kind: 'classify', provider: { url: 'http://127.0.0.1:9', token: 't' }, items }),
        (e: unknown) => e instanceof WorkerCallError && e.failure.code === 'provider_unreachable',
      );
      assert.ok(sent.length > 0, 'turned on, the same request does go out (the check above can fail)');
    } finally {
      globalThis.fetch = realFetch;
      delete (globalThis as { WebSocket?: unknown }).WebSocket;
      await settings.setSettings({ spamCheck: true });
      settings.close();
    }
  });

  it('after a verdict the worker looks the links up, unless the link check is off: then nothing is sent', async () => {
    const sent: string[] = [];
    const realFetch = globalThis.fetch;
    globalThis.fetch = (async (input: URL | RequestInfo) => {
      sent.push(new URL(String(input)).pathname);
      throw new TypeError('no network in this test');
    }) as typeof fetch;
    const p = { url: 'http://127.0.0.1:9', token: 'links' };
    const settings = await PrivateStore.open(); // the worker's own database
    try {
      // A verdict recorded before: the spam check asks nothing, the link check is what is left.
      await settings.putVerdict(accountOf(p), 'm1', { kind: 'verdict', spam: false, at: 1 });
      const client = inProcessWorker();
      const items = [{ messageId: 'm1', raw: 'Subject: hi\r\n\r\nhttps://evil.example/' }];
      const run = async () => {
        const events: WorkerEvent[] = [];
        await client.call({ kind: 'classify', provider: p, items }, (e) => events.push(e));
        return events.map((e) => e.event);
      };
      await settings.setSettings({ linkCheck: false });
      assert.deepEqual(await run(), ['outcome'], 'the verdict only');
      assert.deepEqual(sent, [], 'nothing was fetched for the link check');
      await settings.setSettings({ linkCheck: true });
      assert.deepEqual(await run(), ['outcome', 'blocklist'], 'provider down: an outcome without hits');
      assert.deepEqual(sent, ['/blocklists'], 'turned on, the list is asked for');
      assert.equal(await settings.blocklistOutcome(accountOf(p), 'm1'), undefined, 'a fault is not recorded');
    } finally {
      globalThis.fetch = realFetch;
      await settings.setSettings({ linkCheck: true });
      settings.close();
    }
  });

  it('a restarted background never takes the answer to its predecessor’s call, which the worker still sends', async () => {
    const received: WorkerEnvelope[] = [];
    let relay: (m: WorkerEnvelope) => void = () => {};
    // One worker, as in Chromium's offscreen document; each background gets a new link to it.
    const link = () => ({
      post: (m: WorkerEnvelope) => void received.push(m),
      onMessage: (cb: (m: WorkerEnvelope) => void) => (relay = cb),
      onClose: () => {},
    });
    void new WorkerClient(link()).call({ kind: 'reset' }); // stopped before the answer came
    const restarted = new WorkerClient(link());
    const answer = restarted.call({ kind: 'reset' });
    const [old, fresh] = received;
    relay({ id: old.id, failed: { code: 'protocol', detail: 'the old call' } });
    relay({ id: fresh.id, done: null });
    assert.equal(await answer, null);
  });

  it('maps every failure to a code the badge explains', () => {
    assert.equal(toFailure(new PackageIntegrityError('SHA-256 x')).code, 'package_tampered');
    assert.equal(toFailure(new ProtocolError('unauthenticated', 'bad token')).code, 'bad_token');
    assert.equal(toFailure(new ProtocolError('rate_limited', 'slow down')).code, 'rate_limited');
    assert.equal(toFailure(new ConnectionClosed()).code, 'provider_unreachable');
    assert.equal(toFailure(new TypeError('Failed to fetch')).code, 'provider_unreachable');
    assert.equal(toFailure(Object.assign(new Error('full'), { name: 'QuotaExceededError' })).code, 'storage_full');
    assert.equal(toFailure(new Error('model list: HTTP 503')).code, 'provider_unreachable');
    assert.equal(toFailure(new Error('something else')).code, 'protocol');
  });
});

let n = 0;
const provider = { url: 'http://127.0.0.1:8787', token: 'alice' };

function queueWith(
  classify: (items: ClassifyItem[], emit: (e: WorkerEvent) => void) => Promise<unknown>,
  more: Partial<QueueDeps> = {},
) {
  const store = PrivateStore.open(`private-queue-test-${n++}`);
  const shown: { tab: number; sourceId: string; badge: SpamBadge; fresh: boolean }[] = [];
  const batches: string[][] = [];
  const tokens: string[] = [];
  const queue = new SpamQueue(
    {
      store: () => store,
      classify: (p, items, emit) => {
        tokens.push(p.token);
        batches.push(items.map((i) => i.messageId));
        return classify(items, emit);
      },
      notify: (t, sourceId, badge, fresh) => shown.push({ tab: t.tabId, sourceId, badge, fresh }),
      ...more,
    },
    (e) => (e instanceof WorkerCallError ? e.failure : { code: 'protocol', detail: String(e) }),
  );
  return { queue, store, shown, batches, tokens };
}

/** A queue whose worker answers `spamOf(id)` for each message once released. */
function heldQueue(spamOf: (id: string) => boolean) {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const q = queueWith(async (items, emit) => {
    await gate;
    for (const i of items)
      emit({ event: 'outcome', outcome: { kind: 'verdict', messageId: i.messageId, spam: spamOf(i.messageId) } });
  });
  return { q, release };
}

const settle = () => new Promise((r) => setTimeout(r, 20));

describe('SpamQueue', () => {
  it('shows a stored verdict without asking the worker', async () => {
    const q = queueWith(async () => assert.fail('must not classify'));
    await (await q.store).putVerdict(accountOf(provider), 'm1', { kind: 'verdict', spam: true, at: 1 });
    // Its links were looked up too (else the worker is asked for the link check: see below).
    await (await q.store).putBlocklistOutcome(accountOf(provider), 'm1', { kind: 'already_classified', at: 1 });
    await q.queue.offer(provider, 'm1', 'raw', { tabId: 1 }, 'src-1');
    assert.deepEqual(
      q.shown.map((s) => s.badge.text),
      ['spam (private check)'],
    );
  });

  it('batches waiting messages, classifies each once, and tells every tab showing it', async () => {
    const { q, release } = heldQueue((id) => id === 'a');
    await q.queue.offer(provider, 'a', 'raw a', { tabId: 1 }, 'src-a');
    await q.queue.offer(provider, 'b', 'raw b', { tabId: 1 }, 'src-b');
    await q.queue.offer(provider, 'b', 'raw b', { tabId: 2 }, 'src-b');
    release();
    await settle();
    assert.deepEqual(q.batches, [['a'], ['b']], 'b waited for the next batch, once');
    const final = q.shown.filter((s) => s.badge.state !== 'checking');
    assert.deepEqual(
      final.map((s) => [s.tab, s.sourceId, s.badge.text]),
      [
        [1, 'src-a', 'spam (private check)'],
        [1, 'src-b', 'not spam'],
        [2, 'src-b', 'not spam'],
      ],
    );
    assert.equal(q.shown.filter((s) => s.badge.state === 'checking').length, 3, 'each view says it is checking first');
  });

  it('tells every message of a failed batch what went wrong, in plain words with details', async () => {
    const q = queueWith(async (_items, emit) => {
      emit({ event: 'outcome', outcome: { kind: 'already_classified', messageId: 'x', detail: 'classified before' } });
      throw new WorkerCallError({ code: 'package_tampered', detail: 'SHA-256 mismatch for spam-v1' });
    });
    await q.queue.offer(provider, 'x', 'raw', { tabId: 1 }, 'src-x');
    await q.queue.offer(provider, 'y', 'raw', { tabId: 1 }, 'src-y');
    await settle();
    const final = Object.fromEntries(q.shown.filter((s) => isOutcome(s.badge)).map((s) => [s.sourceId, s.badge]));
    assert.equal(final['src-x'].state, 'checked-before');
    assert.doesNotMatch(
      final['src-x'].text + (final['src-x'].detail ?? ''),
      /\(spam\)/,
      'no task name read as a verdict',
    );
    assert.equal(final['src-y'].state, 'unavailable');
    assert.match(final['src-y'].text, /failed its integrity check/);
    assert.match(final['src-y'].detail ?? '', /SHA-256 mismatch/);
    assert.equal(q.queue.heldCount, 0, 'nothing waits for a tampered package');
  });

  it('the provider down: the unanswered messages wait (shown so), and the next try checks them', async () => {
    let down = true;
    const q = queueWith(async (items, emit) => {
      if (down) {
        emit({ event: 'outcome', outcome: { kind: 'verdict', messageId: 'x', spam: false } });
        throw new WorkerCallError({
          code: 'provider_unreachable',
          detail: 'cannot connect to ws://127.0.0.1:8787/session',
        });
      }
      for (const i of items)
        emit({ event: 'outcome', outcome: { kind: 'verdict', messageId: i.messageId, spam: true } });
    });
    await q.queue.offer(provider, 'x', 'raw', { tabId: 1 }, 'src-x');
    await q.queue.offer(provider, 'y', 'raw', { tabId: 1 }, 'src-y');
    await settle();
    const last = (src: string) => q.shown.filter((s) => s.sourceId === src).at(-1)!.badge;
    assert.equal(last('src-x').text, 'not spam', 'answered before the provider went');
    assert.equal(last('src-y').state, 'waiting');
    assert.match(last('src-y').text, /Waiting for your provider: it cannot be reached/);
    assert.equal(q.queue.heldCount, 1);
    // Shown again meanwhile: it joins the wait, no new request.
    await q.queue.offer(provider, 'y', 'raw', { tabId: 2 }, 'src-y');
    assert.deepEqual(q.batches, [['x'], ['y']], 'no new request while it waits');
    const before = q.batches.length;
    down = false;
    assert.equal(q.queue.retry(), true);
    await settle();
    assert.deepEqual(q.batches.slice(before), [['y']], 'the kept message, once');
    assert.deepEqual(
      q.shown.filter((s) => s.sourceId === 'src-y' && isOutcome(s.badge)).map((s) => [s.tab, s.badge.state, s.fresh]),
      [
        [1, 'spam', true],
        [2, 'spam', true],
      ],
      'both views get the verdict, fresh (it may move to Junk)',
    );
    assert.equal(q.queue.retry(), false, 'nothing kept any more');
  });

  it('a provider asking to slow down shows the messages still unanswered as waiting for it, and they are kept', async () => {
    const q = queueWith(async (_items, emit) => {
      emit({ event: 'outcome', outcome: { kind: 'verdict', messageId: 'x', spam: false } });
      emit({ event: 'slowed' });
      throw new WorkerCallError({ code: 'rate_limited', detail: 'at most 30 sessions per minute' });
    });
    await q.queue.offer(provider, 'x', 'raw', { tabId: 1 }, 'src-x');
    await q.queue.offer(provider, 'y', 'raw', { tabId: 1 }, 'src-y');
    await settle();
    const of = (id: string) => q.shown.filter((s) => s.sourceId === id).map((s) => s.badge);
    assert.ok(!of('src-x').some((b) => b.state === 'waiting'), 'an answered message is not shown as waiting');
    const y = of('src-y').at(-1)!;
    assert.deepEqual([y.state, y.paced], ['waiting', true]);
    assert.match(y.text, /limits how fast mail is checked/);
    assert.equal(q.queue.heldCount, 1);
  });

  it('messages queued behind a batch the provider paces are shown as waiting for it too, not left silent', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const q = queueWith(async (items, emit) => {
      if (items[0].messageId === 'x') emit({ event: 'slowed' });
      await gate;
      for (const i of items)
        emit({ event: 'outcome', outcome: { kind: 'verdict', messageId: i.messageId, spam: false } });
    });
    await q.queue.offer(provider, 'x', 'raw', { tabId: 1 }, 'src-x');
    await settle();
    // Offered while the paced batch still runs: it waits for the next batch, and says why.
    await q.queue.offer(provider, 'y', 'raw', { tabId: 1 }, 'src-y');
    const y = () => q.shown.filter((s) => s.sourceId === 'src-y').map((s) => s.badge);
    assert.deepEqual(
      y().map((b) => [b.state, b.paced]),
      [['waiting', true]],
    );
    release();
    await settle();
    assert.deepEqual(q.batches, [['x'], ['y']]);
    assert.equal(y().at(-1)!.text, 'not spam');
    // The next message, once nothing is paced any more, is just being checked.
    await q.queue.offer(provider, 'z', 'raw', { tabId: 1 }, 'src-z');
    assert.equal(q.shown.find((s) => s.sourceId === 'src-z')!.badge.state, 'checking');
    await settle();
  });

  it('a refused token: nothing more is asked until the user connects again', async () => {
    let refused = false;
    const q = queueWith(
      async () => {
        refused = true;
        throw new WorkerCallError({ code: 'bad_token', detail: 'unauthenticated' });
      },
      { refused: async () => refused },
    );
    await q.queue.offer(provider, 'a', 'raw', { tabId: 1 }, 'src-a');
    await settle();
    await q.queue.offer(provider, 'b', 'raw', { tabId: 1 }, 'src-b');
    await settle();
    assert.deepEqual(q.batches, [['a']], 'b was not sent');
    for (const id of ['src-a', 'src-b'])
      assert.match(q.shown.filter((s) => s.sourceId === id).at(-1)!.badge.text, /no longer accepts/);
  });

  it('after a new token, waiting messages go out under it alone, and the old verdicts are not shown', async () => {
    const { q, release } = heldQueue(() => true);
    const renewed = { ...provider, token: 'alice-new' };
    await (await q.store).putVerdict(accountOf(provider), 'seen', { kind: 'verdict', spam: true, at: 1 });
    await q.queue.offer(provider, 'a', 'raw a', { tabId: 1 }, 'src-a');
    await q.queue.offer(provider, 'b', 'raw b', { tabId: 1 }, 'src-b');
    await q.queue.offer(renewed, 'c', 'raw c', { tabId: 1 }, 'src-c');
    await q.queue.offer(renewed, 'seen', 'raw', { tabId: 1 }, 'src-seen');
    release();
    await settle();
    assert.deepEqual(q.batches, [['a'], ['b'], ['c', 'seen']], 'one account per batch');
    assert.deepEqual(q.tokens, ['alice', 'alice', 'alice-new']);
    assert.equal(
      q.shown.filter((s) => s.sourceId === 'src-seen' && s.badge.state === 'checking').length,
      1,
      'the previous account’s verdict for this id was not reused',
    );
  });

  it('adds “topic shared” to a verdict once the worker says so, also for a stored verdict; never the topic', async () => {
    const q = queueWith(async (items, emit) => {
      for (const i of items)
        emit({ event: 'outcome', outcome: { kind: 'verdict', messageId: i.messageId, spam: false } });
      emit({ event: 'topic', topic: { messageId: 'a', kind: 'shared' } });
      emit({ event: 'topic', topic: { messageId: 'b', kind: 'failed', detail: 'no topic model' } });
    });
    await q.queue.offer(provider, 'a', 'raw a', { tabId: 1 }, 'src-a');
    await q.queue.offer(provider, 'b', 'raw b', { tabId: 1 }, 'src-b');
    await settle();
    const last = (src: string) => q.shown.filter((s) => s.sourceId === src).at(-1)!.badge;
    assert.deepEqual(last('src-a'), { state: 'not-spam', text: 'not spam', topicShared: true });
    assert.equal(last('src-b').topicShared, undefined, 'a failed extraction claims nothing');
    const store = await q.store;
    await store.putVerdict(accountOf(provider), 'c', { kind: 'verdict', spam: true, at: 1 });
    await store.replay.append({ messageId: 'c', contentHash: '00' });
    await q.queue.offer(provider, 'c', 'raw c', { tabId: 1 }, 'src-c');
    assert.equal(last('src-c').topicShared, true, 'the replay log says it was fed');
  });

  it('adds a blocklist hit to the verdict’s badge in plain words; a hit makes a “not spam” message spam (fresh: it may move)', async () => {
    const hit = { item: 'domain:evil.example', category: 'phishing', score: 90, since: '2024-05-30' };
    const q = queueWith(async (items, emit) => {
      for (const i of items)
        emit({ event: 'outcome', outcome: { kind: 'verdict', messageId: i.messageId, spam: i.messageId === 's' } });
      emit({ event: 'blocklist', blocklist: { messageId: 'h', hits: [hit, { ...hit, item: 'host:a.evil.example' }] } });
      emit({ event: 'blocklist', blocklist: { messageId: 's', hits: [hit] } });
      emit({ event: 'blocklist', blocklist: { messageId: 'c', hits: [], detail: 'provider down' } });
    });
    for (const id of ['h', 's', 'c']) await q.queue.offer(provider, id, `raw ${id}`, { tabId: 1 }, `src-${id}`);
    await settle();
    const last = (src: string) => q.shown.filter((s) => s.sourceId === src).at(-1)!.badge;
    const line =
      'A link in this message (evil.example) is on your provider’s phishing list (since 2024-05-30, score 90).';
    assert.deepEqual(last('src-h'), { state: 'spam', text: BLOCKLISTED, detail: undefined, blocklist: [line] });
    assert.deepEqual(last('src-s'), { state: 'spam', text: 'spam (private check)', blocklist: [line] });
    assert.deepEqual(last('src-c'), { state: 'not-spam', text: 'not spam' }, 'no hit, no fault: no line');
    assert.deepEqual(
      q.shown.filter((s) => s.badge.state !== 'checking' && s.sourceId !== 'src-c').map((s) => [s.sourceId, s.fresh]),
      [
        ['src-h', true],
        ['src-h', true],
        ['src-s', true],
        ['src-s', false],
      ],
      'the hit is fresh only where it changed the verdict (spam was moved already)',
    );
  });

  it('a stored verdict shows its stored hits at once; one whose links were never looked up goes to the worker for them', async () => {
    const hit = { item: `sha256:${'ab'.repeat(32)}`, category: 'malware', score: 99, since: '2024-06-30' };
    const asked: string[][] = [];
    const q = queueWith(async (items, emit) => {
      asked.push(items.map((i) => i.messageId));
      for (const i of items)
        emit({ event: 'outcome', outcome: { kind: 'verdict', messageId: i.messageId, spam: false } });
      emit({ event: 'blocklist', blocklist: { messageId: 'later', hits: [hit] } });
    });
    const store = await q.store;
    const account = accountOf(provider);
    await store.putVerdict(account, 'kept', { kind: 'verdict', spam: false, at: 1 });
    await store.putBlocklistOutcome(account, 'kept', {
      kind: 'looked-up',
      listId: 'l',
      version: 1,
      hits: [hit],
      at: 1,
    });
    await store.putVerdict(account, 'later', { kind: 'verdict', spam: false, at: 1 });
    await q.queue.offer(provider, 'kept', 'raw', { tabId: 1 }, 'src-kept');
    await q.queue.offer(provider, 'later', 'raw', { tabId: 1 }, 'src-later');
    await settle();
    assert.deepEqual(asked, [['later']], 'only the message without a link-check outcome');
    const line = 'An attachment of this message is on your provider’s malware list (since 2024-06-30, score 99).';
    const of = (src: string) => q.shown.filter((s) => s.sourceId === src).map((s) => s.badge);
    assert.deepEqual(
      of('src-kept').map((b) => [b.state, b.blocklist]),
      [['spam', [line]]],
    );
    assert.deepEqual(
      of('src-later').map((b) => [b.state, b.blocklist]),
      [
        ['not-spam', undefined],
        ['spam', [line]],
      ],
      'the stored verdict at once (not “checking”, not shown twice), then the hit',
    );

    // Link check off: a stored verdict is only shown.
    await store.putVerdict(account, 'off', { kind: 'verdict', spam: false, at: 1 });
    await store.setSettings({ linkCheck: false });
    await q.queue.offer(provider, 'off', 'raw', { tabId: 1 }, 'src-off');
    await settle();
    assert.deepEqual(asked, [['later']], 'nothing asked with the link check off');
  });

  it('drops waiting messages when keys are locked; the batch already in the worker finishes', async () => {
    const { q, release } = heldQueue(() => false);
    await q.queue.offer(provider, 'a', 'raw a', { tabId: 1 }, 'src-a');
    await q.queue.offer(provider, 'b', 'raw b', { tabId: 1 }, 'src-b');
    q.queue.forgetWaiting();
    release();
    await settle();
    assert.deepEqual(q.batches, [['a']], 'b never reached the worker');
    const final = Object.fromEntries(
      q.shown.filter((s) => s.badge.state !== 'checking').map((s) => [s.sourceId, s.badge]),
    );
    assert.equal(final['src-a'].text, 'not spam');
    assert.match(final['src-b'].text, /keys were locked/);
  });
});
