// Group commit on the PostgreSQL store (store-postgres.ts): bookkeeping
// commits without waiting for the disk, a durable write (a recorded answer,
// a delivery) resolves only after a sync round that started after its
// commit, writes issued together share one round, and a failed round fails
// only its own writers. The sync rounds are held back or failed by wrapping
// the driver's `setval` on the sync sequence; the rules of the store itself
// run on both databases in store.test.ts. A classification's statements are
// counted through the real server: each is a round trip and a commit.
import assert from 'node:assert/strict';
import { after, before, describe, mock, test } from 'node:test';
import pg from 'pg';
import { SYNC_SEQUENCE } from '../src/postgres-connections.js';
import type { Store } from '../src/store.js';
import { openPostgresStore } from '../src/store-postgres.js';
import { NONCE, startHarness, TestClient } from './harness.js';
import { postgresMissing, startPostgres, type TestPostgres } from './postgres.js';
import { suitePostgres } from './postgres-suite.js';

const RAW = 'From: a@x.org\r\nSubject: s\r\n\r\nbody';
const REQ = Buffer.alloc(32, 0xa);
let postgres: TestPostgres;

/** Every sync round waits for `gate()` and is counted, while `body` runs on a fresh store with alice's m1. */
async function withGatedSyncs(
  gate: () => Promise<void>,
  body: (s: { store: Store; url: string; a: number; rounds: () => number }) => Promise<void>,
): Promise<void> {
  const url = await postgres.database();
  const store = await openPostgresStore(url);
  const a = (await store.addUser('alice')).userId;
  await store.deliver(a, 'm1', RAW);
  let rounds = 0;
  const query = pg.Client.prototype.query;
  const m = mock.method(pg.Client.prototype, 'query', async function (this: pg.Client, ...args: unknown[]) {
    if (typeof args[0] === 'string' && args[0].includes(`setval('${SYNC_SEQUENCE}'`)) {
      await gate();
      rounds++;
    }
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  });
  try {
    await body({ store, url, a, rounds: () => rounds });
  } finally {
    m.mock.restore();
    await store.close();
  }
}

/** The answer column as another connection sees it (committed, whatever the disk). */
async function committedAnswer(url: string, user: number, id: string): Promise<Buffer | null | undefined> {
  const c = new pg.Client({ connectionString: url });
  await c.connect();
  try {
    const r = await c.query("SELECT answer FROM classified WHERE user_id = $1 AND message_id = $2 AND task = 'spam'", [
      user,
      id,
    ]);
    return r.rows[0]?.answer;
  } finally {
    await c.end();
  }
}

const settled = (ms = 150): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('postgres group commit', { skip: postgresMissing() }, () => {
  before(async () => {
    postgres = await startPostgres();
  });
  after(async () => {
    await postgres?.stop();
  });

  test('bookkeeping resolves at its commit; an answer and its resend only after a sync round', async () => {
    let open!: () => void;
    const opened = new Promise<void>((r) => (open = r));
    await withGatedSyncs(
      () => opened,
      async ({ store, url, a, rounds }) => {
        assert.equal(await store.takeRate(a, 10), true);
        const { salt } = (await store.userKey(a, 'spam', 1))!;
        const spend = { salt, modelId: 'spam', version: 1, epoch: 1, budget: 128, count: 1 };
        const claim = (await store.claimAndSpend(a, 'm1', 'spam', REQ, spend)) as { attempt: Buffer };
        let recorded = false;
        // As a session records it: with the cap of unacknowledged answers, in one call.
        const record = store
          .recordAnswer(a, 'm1', 'spam', claim.attempt, Buffer.from('gc'), 100)
          .then((ok) => ((recorded = true), ok));
        await settled();
        // Committed (another connection reads it) but not yet synced: nobody may send it.
        assert.deepEqual(await committedAnswer(url, a, 'm1'), Buffer.from('gc'));
        let resent = false;
        const resend = store.recordedAnswer(a, 'm1', 'spam', REQ).then((r) => ((resent = true), r));
        await settled();
        assert.equal(recorded, false, 'the answer resolved before a sync round');
        assert.equal(resent, false, 'a resend went out before a sync round');
        open();
        assert.equal(await record, true);
        assert.deepEqual(await resend, { answer: Buffer.from('gc') });
        assert.ok(rounds() >= 1 && rounds() <= 2, `${rounds()} sync rounds`);
      },
    );
  });

  test('durable writes issued together share one sync round, each with its own outcome', async () => {
    await withGatedSyncs(
      () => settled(50), // a slow disk: the writes commit while the first round runs
      async ({ store, a, rounds }) => {
        // 30 deliveries at once, the last a duplicate of m1.
        const outcomes = await Promise.allSettled(
          Array.from({ length: 30 }, (_, i) => store.deliver(a, i === 29 ? 'm1' : `n${i}`, RAW)),
        );
        assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 29);
        assert.match(String((outcomes[29] as PromiseRejectedResult).reason), /already delivered/);
        // One round starts with the first write done; the rest share at most one more.
        assert.ok(rounds() >= 1 && rounds() <= 2, `${rounds()} sync rounds for 29 durable writes`);
      },
    );
  });

  test('a failed sync round fails its writers only; the next round connects again', async () => {
    let failures = 2; // the round and its retry on a new connection
    await withGatedSyncs(
      async () => {
        if (failures > 0) {
          failures--;
          throw Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' });
        }
      },
      async ({ store, a }) => {
        await assert.rejects(store.deliver(a, 'm2', RAW), /syncing the log failed/);
        await store.deliver(a, 'm3', RAW);
        assert.deepEqual(
          (await store.listMessages(a)).map((m) => m.id),
          ['m1', 'm2', 'm3'], // m2 committed; only its caller was not told it is on disk
        );
      },
    );
  });

  test('answers recorded in one turn are one statement, each for its own attempt, and resolve only after a sync round', async () => {
    // Sync rounds pass until the records are sent, then wait for open().
    let open = (): void => undefined;
    let hold: Promise<void> | undefined;
    await withGatedSyncs(
      async () => hold,
      async ({ store, url, a }) => {
        const b = (await store.addUser('bob')).userId;
        await store.deliver(a, 'm2', RAW);
        await store.deliver(b, 'm1', RAW);
        const claimed = async (user: number, id: string) => {
          const { salt } = (await store.userKey(user, 'spam', 1))!;
          const spend = { salt, modelId: 'spam', version: 1, epoch: 1, budget: 128, count: 1 };
          return ((await store.claimAndSpend(user, id, 'spam', REQ, spend)) as { attempt: Buffer }).attempt;
        };
        const [a1, a2, b1] = [await claimed(a, 'm1'), await claimed(a, 'm2'), await claimed(b, 'm1')];
        const statements: string[] = [];
        store.observe((statement) => statements.push(statement));
        hold = new Promise<void>((r) => (open = r));
        let resolved = 0;
        const record = (user: number, id: string, attempt: Buffer) =>
          store.recordAnswer(user, id, 'spam', attempt, Buffer.from(`gc ${user} ${id}`)).finally(() => resolved++);
        // One turn: alice's m1 and m2, bob's m1 under alice's attempt (not his: refused), then his own.
        const recorded = Promise.all([record(a, 'm1', a1), record(a, 'm2', a2), record(b, 'm1', a1)]);
        await settled();
        const held = { resolved, committed: await committedAnswer(url, a, 'm2') };
        open();
        assert.deepEqual(held, { resolved: 0, committed: Buffer.from(`gc ${a} m2`) }, 'committed, not yet resolved');
        assert.deepEqual(await recorded, [true, true, false]);
        assert.deepEqual(statements, ['update classified'], 'the three in one statement');
        assert.equal(await committedAnswer(url, b, 'm1'), null);
        assert.equal(await record(b, 'm1', b1), true);
      },
    );
  });

  test("acknowledgements made in one turn are one statement, and each drops only its own request's answer", async () => {
    await withGatedSyncs(
      async () => undefined,
      async ({ store, a }) => {
        const b = (await store.addUser('bob')).userId;
        const ids = ['m1', 'm2', 'm3', 'm4'];
        for (const id of ids.slice(1)) await store.deliver(a, id, RAW);
        await store.deliver(b, 'm1', RAW);
        const answered = async (user: number, id: string, request: Buffer) => {
          const { salt } = (await store.userKey(user, 'spam', 1))!;
          const spend = { salt, modelId: 'spam', version: 1, epoch: 1, budget: 128, count: 1 };
          const claim = (await store.claimAndSpend(user, id, 'spam', request, spend)) as { attempt: Buffer };
          assert.equal(await store.recordAnswer(user, id, 'spam', claim.attempt, Buffer.from(`gc ${id}`)), true);
        };
        for (const id of ids) await answered(a, id, REQ);
        const bobs = Buffer.alloc(32, 0xc);
        await answered(b, 'm1', bobs);
        const statements: string[] = [];
        store.observe((statement) => statements.push(statement));
        // One turn: alice's m1 and m2; her m3 with another request; bob's m1 with alice's request, and
        // an m4 of bob's, which he never had (alice's m4 has that request).
        await Promise.all([
          store.acknowledge(a, 'm1', 'spam', REQ),
          store.acknowledge(a, 'm2', 'spam', REQ),
          store.acknowledge(a, 'm3', 'spam', Buffer.alloc(32, 0xb)),
          store.acknowledge(b, 'm1', 'spam', REQ),
          store.acknowledge(b, 'm4', 'spam', REQ),
        ]);
        assert.deepEqual(statements, ['update classified']);
        const kept = await store
          .sql()
          .all<{ user_id: number; message_id: string }>(
            'SELECT user_id, message_id FROM classified WHERE answer IS NOT NULL ORDER BY user_id, message_id',
          );
        assert.deepEqual(kept, [
          { user_id: a, message_id: 'm3' },
          { user_id: a, message_id: 'm4' },
          { user_id: b, message_id: 'm1' },
        ]);
      },
    );
  });

  test('connections the server drops are opened again: a statement in flight may fail, the next ones work', async () => {
    const url = await postgres.database();
    const store = await openPostgresStore(url);
    const { userId } = await store.addUser('frank');
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.deliver(userId, `a${i}`, RAW)));
    // As a PostgreSQL restart or an idle-connection reaper would: every backend of the database ends.
    const admin = new pg.Client({ connectionString: url });
    await admin.connect();
    await admin.query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()',
    );
    await admin.end();
    await settled(100);
    const outcomes = await Promise.allSettled(
      Array.from({ length: 20 }, (_, i) => store.deliver(userId, `b${i}`, RAW)),
    );
    const failed = outcomes.filter((o) => o.status === 'rejected').length;
    // Then everything works again, durable writes (sync rounds) included.
    await store.deliver(userId, 'c0', RAW);
    assert.equal(await store.claim(userId, 'c0', 'spam', REQ).then((c) => typeof c), 'object');
    const ids = (await store.listMessages(userId)).map((m) => m.id);
    // (A statement that failed may still have committed: the connection died before its answer came.)
    assert.ok(ids.includes('c0') && ids.filter((id) => id.startsWith('b')).length >= 20 - failed, `${failed} failed`);
    await store.close();
  });
});

describe('postgres round trips per classification', { skip: postgresMissing() }, () => {
  const cluster = suitePostgres();

  test("a classification is three statements, one round trip and commit each: the frame's rate charge with the claim and its key spend, the answer (a session's first with the cap), the acknowledgement", async () => {
    const store = await openPostgresStore(await cluster.database());
    const h = await startHarness({}, {}, { store });
    try {
      const u = await store.addUser('alice');
      for (const id of ['m1', 'm2']) await store.deliver(u.userId, id, RAW);
      const c = await TestClient.connect(h.server.wsUrl);
      const hello = { token: u.token, modelId: 'spam', modelVersion: 2, clientNonce: NONCE, keyEpoch: 0 };
      assert.equal((await c.request('hello', 1, hello)).name, 'welcome');
      const classify = async (id: string, requestId: number): Promise<void> => {
        const gc = await c.request('spam_request', requestId, {
          messageId: id,
          lwe: new Uint8Array(4),
          choices: new Uint8Array(1),
        });
        assert.equal(gc.name, 'spam_gc');
        c.send('spam_done', requestId + 1, { messageId: id });
        assert.equal((await c.request('ping', requestId + 2, { nonce: 1 })).name, 'pong'); // spam_done was handled
      };
      /** Until `done`: spam_done's write goes on beside the session's next frames (acknowledgements.ts). */
      const until = async (done: () => boolean | Promise<boolean>): Promise<void> => {
        for (let i = 0; i < 500 && !(await done()); i++) await new Promise((r) => setTimeout(r, 10));
      };
      const statements: string[] = [];
      store.observe((statement) => statements.push(statement));
      await classify('m1', 2); // the first of a window also drops the user's past windows
      await until(async () => {
        const [row] = await store
          .sql()
          .all<{ answer: Buffer | null }>('SELECT answer FROM classified WHERE user_id = ? AND message_id = ?', [
            u.userId,
            'm1',
          ]);
        return row.answer === null;
      });
      assert.ok(statements.includes('call pmf_record_answer_v1'), "the session's first answer caps");
      statements.length = 0;
      await classify('m2', 10);
      await until(() => statements.length >= 3);
      // The session's second email: its answer needs no cap (the first capped), a plain update.
      assert.deepEqual(statements, ['call pmf_charge_claim_v2', 'update classified', 'update classified']);
      c.close();
    } finally {
      await h.close();
      await store.close();
    }
  });
});
