// spam_done's acknowledgement is written off the email's path
// (src/acknowledgements.ts): the next request is answered while it is still
// being written, a spam_resend waits for it (an acknowledged answer is never
// sent again), and a session has at most one in flight.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Message } from '../../protocol/messages.js';
import { NONCE, startHarness, TestClient, type Harness } from './harness.js';

const SPAM_REQUEST = { lwe: new Uint8Array(10), choices: new Uint8Array(3) };

/** A session of alice's with m1..m3 delivered, whose acknowledgements are held until `release` is called. */
async function withHeldAcks(
  body: (c: TestClient, h: Harness, held: { count: number; release(): void }) => Promise<void>,
): Promise<void> {
  const h = await startHarness();
  try {
    const { token, userId } = await h.store.addUser('alice');
    for (const id of ['m1', 'm2', 'm3']) await h.store.deliver(userId, id, 'Subject: x\r\n\r\nx');
    const acknowledge = h.store.acknowledge;
    const waiting: (() => void)[] = [];
    const held = {
      count: 0,
      release: () => waiting.splice(0).forEach((go) => go()),
    };
    Object.assign(h.store, {
      acknowledge: async (...a: Parameters<typeof acknowledge>) => {
        held.count++;
        await new Promise<void>((go) => waiting.push(go));
        return acknowledge(...a);
      },
    });
    const c = await TestClient.connect(h.server.wsUrl);
    const w = await c.request('hello', 1, { token, modelId: 'spam', modelVersion: 2, clientNonce: NONCE, keyEpoch: 0 });
    assert.equal(w.name, 'welcome');
    await body(c, h, held);
    held.release();
    c.close();
  } finally {
    await h.close();
  }
}

/** The next frame, checked to come only after `ms` of silence, when `release` was called. */
async function after(c: TestClient, ms: number, release: () => void): Promise<Message> {
  let early: Message | undefined;
  const next = c.next(ms + 5000).then((m) => (early = m));
  await new Promise((r) => setTimeout(r, ms));
  assert.equal(early, undefined, 'answered before the acknowledgement was written');
  release();
  return next;
}

test('the next spam_request is answered while the previous spam_done is still being written', async () => {
  await withHeldAcks(async (c, _h, held) => {
    assert.equal((await c.request('spam_request', 2, { messageId: 'm1', ...SPAM_REQUEST })).name, 'spam_gc');
    c.send('spam_done', 3, { messageId: 'm1' });
    const next = await c.request('spam_request', 4, { messageId: 'm2', ...SPAM_REQUEST });
    assert.equal(next.name, 'spam_gc');
    assert.equal(held.count, 1);
  });
});

test('a spam_resend after spam_done waits for the acknowledgement and never gets the answer again', async () => {
  await withHeldAcks(async (c, _h, held) => {
    const fields = { messageId: 'm1', ...SPAM_REQUEST };
    assert.equal((await c.request('spam_request', 2, fields)).name, 'spam_gc');
    c.send('spam_done', 3, { messageId: 'm1' });
    c.send('spam_resend', 4, fields);
    const refused = await after(c, 300, held.release);
    assert.equal(refused.name === 'error' && refused.code, 'already_classified');
  });
});

test('a session has at most one acknowledgement in flight', async () => {
  await withHeldAcks(async (c, _h, held) => {
    for (const [i, id] of ['m1', 'm2'].entries()) {
      assert.equal((await c.request('spam_request', 10 + i, { messageId: id, ...SPAM_REQUEST })).name, 'spam_gc');
      c.send('spam_done', 20 + i, { messageId: id });
    }
    // m2's spam_done waits for m1's write: the session's next frame with it.
    c.send('ping', 30, { nonce: 1 });
    const pong = await after(c, 300, () => {
      assert.equal(held.count, 1);
      held.release();
    });
    assert.equal(pong.name, 'pong');
    assert.equal(held.count, 2);
  });
});
