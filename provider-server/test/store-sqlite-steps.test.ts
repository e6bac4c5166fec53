// The SQLite driver's operations of several statements (SqlDriver.atomic):
// a frame's rate charge and a claim with its key spend cost one commit
// round each, not one per statement, a spam_request's charge and claim one
// together (what that combination must keep: message-rate.test.ts, on both
// stores), and an operation that fails inside a batch leaves none of its
// writes while the batch's other writes commit.
import assert from 'node:assert/strict';
import path from 'node:path';
import { mock, test } from 'node:test';
import Database from 'better-sqlite3';
import { LIMIT_DEFAULTS } from '../src/limits.js';
import { takeMessageRate } from '../src/message-rate.js';
import { changes, rows, type Steps } from '../src/store-driver.js';
import { openSqliteStore } from '../src/store-sqlite.js';
import type { Store } from '../src/store.js';
import { tempDir } from '../../scripts/test/temp-dir.js';
import type { Message } from '../../protocol/messages.js';
import { NONCE, startHarness, TestClient } from './harness.js';

const RAW = 'Subject: x\r\n\r\nx';

/** A fresh store on a file (an idle loop: every batch commits in the turn after its writes) with alice's message m1. */
async function withStore(body: (store: Store, userId: number) => Promise<void>): Promise<void> {
  const store = openSqliteStore(path.join(tempDir('pmf-steps-'), 'store.db'), { loop: { busy: () => false } });
  try {
    const { userId } = await store.addUser('alice');
    await store.deliver(userId, 'm1', RAW);
    await body(store, userId);
  } finally {
    await store.close();
  }
}

/** How many COMMITs `work` made. */
async function commitsOf(work: () => Promise<unknown>): Promise<number> {
  const exec = mock.method(Database.prototype, 'exec');
  try {
    await work();
    return exec.mock.calls.filter((c) => c.arguments[0] === 'COMMIT').length;
  } finally {
    exec.mock.restore();
  }
}

test('sqlite: the charge of a first frame (frame, minute, day, counted) is one commit round, and counts as before', async () => {
  await withStore(async (store, userId) => {
    const { salt } = (await store.userKey(userId, 'spam', 1))!;
    const user = { userId, salt };
    assert.equal(await commitsOf(() => takeMessageRate(store, LIMIT_DEFAULTS, user, 'm1')), 1);
    // Counted once: one request in the minute, one message in the day; its next frames are free.
    assert.equal(await commitsOf(() => takeMessageRate(store, LIMIT_DEFAULTS, user, 'm1')), 1);
    const limits = { ...LIMIT_DEFAULTS, requestsPerMinute: 2, messagesPerDay: 1, backlogAllowance: 0 };
    await store.deliver(userId, 'm2', RAW);
    await assert.rejects(takeMessageRate(store, limits, user, 'm2'), { code: 'daily_limit' });
  });
});

test('sqlite: a claim with its key spend is one commit round, and a used-up key releases the claim', async () => {
  await withStore(async (store, userId) => {
    const { salt, epoch } = (await store.userKey(userId, 'spam', 1))!;
    const spend = { salt, modelId: 'spam', version: 1, epoch, budget: 4, count: 1 };
    let claim: unknown;
    assert.equal(
      await commitsOf(async () => (claim = await store.claimAndSpend(userId, 'm1', 'spam', Buffer.alloc(32), spend))),
      1,
    );
    assert.equal(typeof claim, 'object');
    await store.deliver(userId, 'm2', RAW);
    // Epoch 1 spent its budget and rotated (1 + 3 used): the claim of m2 under it is released.
    assert.equal(await store.spendUserKey(salt, 'spam', 1, epoch, 4, 3), 'ok');
    assert.equal(await store.claimAndSpend(userId, 'm2', 'spam', Buffer.alloc(32), spend), 'rotated');
    const claims = await store
      .sql()
      .all('SELECT 1 FROM classified WHERE user_id = ? AND message_id = ?', [userId, 'm2']);
    assert.equal(claims.length, 0);
  });
});

test('sqlite: an operation that fails inside a batch leaves none of its writes, and the batch still commits the rest', async () => {
  await withStore(async (store, userId) => {
    const db = store.sql();
    /** Marks m1 read, then fails as `how` says. */
    function* failing(how: 'statement' | 'thrown'): Steps<void> {
      yield* changes('UPDATE messages SET rate_frames = 7 WHERE user_id = ? AND message_id = ?', [userId, 'm1']);
      if (how === 'thrown') throw new Error('refused');
      yield* rows('INSERT INTO users (id, name, created_at, key_salt) VALUES (?, ?, ?, ?) RETURNING id', [
        userId,
        'alice',
        0,
        Buffer.alloc(32),
      ]);
    }
    for (const how of ['statement', 'thrown'] as const) {
      // One turn: the failing operation between two writes of the same batch.
      const results = await Promise.allSettled([
        store.deliver(userId, `before-${how}`, RAW),
        db.atomic!('failing', failing(how)),
        store.deliver(userId, `after-${how}`, RAW),
      ]);
      assert.deepEqual(
        results.map((r) => r.status),
        ['fulfilled', 'rejected', 'fulfilled'],
      );
      if (how === 'statement') assert.equal(db.violated((results[1] as PromiseRejectedResult).reason), 'unique');
      assert.ok(await store.isDelivered(userId, `before-${how}`));
      assert.ok(await store.isDelivered(userId, `after-${how}`));
      const [m1] = await db.all<{ frames: number }>(
        'SELECT rate_frames AS frames FROM messages WHERE user_id = ? AND message_id = ?',
        [userId, 'm1'],
      );
      assert.equal(m1.frames, 0, `the failed operation's first statement was backed out (${how})`);
    }
  });
});

/** A session of alice's on a server over a fresh file store (idle loop, as withStore), after hello. */
async function withSession(body: (c: TestClient, store: Store, userId: number) => Promise<void>): Promise<void> {
  const store = openSqliteStore(path.join(tempDir('pmf-steps-'), 'store.db'), { loop: { busy: () => false } });
  const h = await startHarness({}, {}, { store });
  try {
    const { token, userId } = await store.addUser('alice');
    await store.deliver(userId, 'm1', RAW);
    const c = await TestClient.connect(h.server.wsUrl);
    const w = await c.request('hello', 1, { token, modelId: 'spam', modelVersion: 2, clientNonce: NONCE, keyEpoch: 0 });
    assert.equal(w.name, 'welcome');
    await body(c, store, userId);
    c.close();
  } finally {
    await h.close();
    await store.close();
  }
}

const SPAM_REQUEST = { messageId: 'm1', lwe: new Uint8Array(10), choices: new Uint8Array(3) };

/** What the rate kept of alice's m1 and her minute: the charge of its first frame, when taken. */
async function charged(store: Store, userId: number): Promise<unknown> {
  const [m1] = await store
    .sql()
    .all('SELECT rate_frames AS frames, rate_counted AS counted FROM messages WHERE user_id = ? AND message_id = ?', [
      userId,
      'm1',
    ]);
  const minute = await store.sql().all('SELECT count FROM rate_windows WHERE user_id = ?', [userId]);
  return { m1, minute };
}

test('sqlite: a spam_request costs two commit rounds, its charge with its claim and key spend, then its answer', async () => {
  await withSession(async (c, store, userId) => {
    let gc: Message | undefined;
    assert.equal(await commitsOf(async () => (gc = await c.request('spam_request', 2, SPAM_REQUEST))), 2);
    assert.equal(gc?.name, 'spam_gc');
    assert.deepEqual(await charged(store, userId), { m1: { frames: 1, counted: 1 }, minute: [{ count: 1 }] });
    assert.ok(await store.isClassified(userId, 'm1'));
  });
});
