// The rate counts delivered messages, not frames (src/message-rate.ts,
// docs/security.md#the-rate-counts-messages), attacked by a malicious client
// against the real server and store: it repeats a message id, names ids
// never delivered, floods frames and opens many sessions at once. (The
// crypto is the harness's double: every refusal here comes before it.) On
// both stores: PostgreSQL charges a frame in one call of its own function.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Message } from '../../protocol/messages.js';
import { FRAMES_PER_MESSAGE, SETUP_OT_FRAMES } from '../../protocol/limits.js';
import type { ServerLimits } from '../src/limits.js';
import type { Store } from '../src/store.js';
import { openPostgresStore } from '../src/store-postgres.js';
import { openSqliteStore } from '../src/store-sqlite.js';
import { NONCE, startHarness, TestClient, type Harness } from './harness.js';
import { postgresMissing } from './postgres.js';
import { suitePostgres } from './postgres-suite.js';

const LWE = { lwe: new Uint8Array(4), choices: new Uint8Array(1) };

function rateSuite(kind: string, openStore: () => Promise<Store>): void {
  async function withUser(
    limits: Partial<ServerLimits>,
    ids: string[],
    fn: (h: Harness, connect: () => Promise<TestClient>, userId: number) => Promise<void>,
  ): Promise<void> {
    const store = await openStore();
    const h = await startHarness({ hellosPerMinute: 1000, ...limits }, {}, { store });
    try {
      const u = await h.store.addUser('mallory');
      for (const id of ids) await h.store.deliver(u.userId, id, 'Subject: x\r\n\r\nx');
      const hello = { token: u.token, modelId: 'spam', modelVersion: 2, clientNonce: NONCE, keyEpoch: 0 };
      const connect = async () => {
        const c = await TestClient.connect(h.server.wsUrl);
        assert.equal((await c.request('hello', 1, hello)).name, 'welcome');
        return c;
      };
      await fn(h, connect, u.userId);
    } finally {
      await h.close();
      await store.close();
    }
  }

  /** A spam_request for `id`, acknowledged when answered; the answer's name or error code. */
  async function ask(c: TestClient, id: string, requestId = 2): Promise<string> {
    const m: Message = await c.request('spam_request', requestId, { messageId: id, ...LWE });
    if (m.name === 'spam_gc') c.send('spam_done', requestId + 1, { messageId: id });
    return m.name === 'error' ? m.code : m.name;
  }

  test(`${kind}: a message counts once for its requests: asked again and resent, three messages fit a limit of three`, async () => {
    await withUser({ requestsPerMinute: 3 }, ['a', 'b', 'c', 'd'], async (_h, connect) => {
      const c = await connect();
      for (const id of ['a', 'b', 'c']) {
        assert.equal(await ask(c, id), 'spam_gc');
        // What a reconnecting client sends: the request again, then a resend (both free for this message).
        assert.equal(await ask(c, id), 'already_classified');
        const resend = await c.request('spam_resend', 4, { messageId: id, ...LWE });
        assert.equal(resend.name === 'error' && resend.code, 'already_classified');
      }
      assert.equal(await ask(c, 'd'), 'rate_limited');
      c.close();
    });
  });

  test(`${kind}: a message id repeated past its free frames, and ids never delivered, cost a unit each`, async () => {
    const limit = 10;
    await withUser({ requestsPerMinute: limit }, ['a', 'b'], async (h, connect, userId) => {
      const c = await connect();
      assert.equal(await ask(c, 'a'), 'spam_gc'); // unit 1
      for (let i = 1; i < FRAMES_PER_MESSAGE; i++) assert.equal(await ask(c, 'a'), 'already_classified');
      // Flooding the same id: each frame past the free ones counts.
      for (let i = 0; i < 5; i++) assert.equal(await ask(c, 'a'), 'already_classified'); // units 2..6
      // Varying ids the provider never delivered: each counts.
      for (let i = 0; i < limit - 6; i++) assert.equal(await ask(c, `never-${i}`), 'unknown_message'); // units 7..10
      assert.equal(await ask(c, 'a'), 'rate_limited');
      assert.equal(await ask(c, 'b'), 'rate_limited');
      assert.equal(await h.store.isClassified(userId, 'b'), false);
      c.close();
    });
  });

  test(`${kind}: a session's first ot frames are paid for by its hello; later ones count as units`, async () => {
    const ot = async (c: TestClient) => {
      const m = await c.request('ot', 9, { payload: new Uint8Array([1, 2, 3]) });
      return m.name === 'error' ? m.code : m.name;
    };
    await withUser({ requestsPerMinute: 1, hellosPerMinute: 3 }, ['a'], async (_h, connect) => {
      const sessions = [await connect(), await connect(), await connect()];
      for (const c of sessions) {
        for (let i = 0; i < SETUP_OT_FRAMES; i++) assert.equal(await ot(c), 'ot_reply', 'setup, free');
      }
      assert.equal(await ot(sessions[0]!), 'ot_reply'); // the one unit of the minute
      assert.equal(await ot(sessions[1]!), 'rate_limited');
      assert.equal(await ask(sessions[2]!, 'a'), 'rate_limited', 'the free frames took nothing, the unit did');
      // Free frames come no faster than sessions, which hellosPerMinute bounds (session.test.ts).
      for (const s of sessions) s.close();
    });
  });

  test(`${kind}: the daily cap and the backlog allowance hold against many sessions at once, and a refused message stays unclaimed`, async () => {
    const [perDay, allowance] = [2, 3];
    const ids = Array.from({ length: 12 }, (_, i) => `m${i}`);
    await withUser(
      { requestsPerMinute: 10_000, messagesPerDay: perDay, backlogAllowance: allowance },
      ids,
      async (h, connect, userId) => {
        const sessions = await Promise.all(Array.from({ length: 6 }, connect));
        // Six sessions, two new messages each, all at once.
        const answers = (
          await Promise.all(sessions.map(async (c, s) => [await ask(c, ids[2 * s]), await ask(c, ids[2 * s + 1])]))
        ).flat();
        assert.equal(answers.filter((a) => a === 'spam_gc').length, perDay + allowance);
        assert.equal(answers.filter((a) => a === 'daily_limit').length, ids.length - perDay - allowance);
        const classified = await Promise.all(ids.map((id) => h.store.isClassified(userId, id)));
        assert.deepEqual(
          classified,
          answers.map((a) => a === 'spam_gc'),
        );
        // A new session of the same key salt gets nothing more today.
        const late = await connect();
        const refused = ids.find((_, i) => !classified[i])!;
        assert.equal(await ask(late, refused), 'daily_limit');
        for (const c of [...sessions, late]) c.close();
      },
    );
  });

  /** What the rate kept of message `id` and of the user's minute. */
  async function charged(store: Store, userId: number, id: string): Promise<unknown> {
    const sql = store.sql();
    return {
      message: await sql.all(
        'SELECT rate_frames AS frames, rate_counted AS counted FROM messages WHERE user_id = ? AND message_id = ?',
        [userId, id],
      ),
      minute: await sql.all('SELECT count FROM rate_windows WHERE user_id = ?', [userId]),
    };
  }

  /** Makes every new claim fail inside the store (a trigger); returns what lifts it. */
  async function refuseClaims(store: Store): Promise<() => Promise<unknown>> {
    const sql = store.sql();
    if (sql.dialect === 'postgres') {
      await sql.run(
        "CREATE FUNCTION refuse_claims() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused'; END $$",
      );
      await sql.run(
        'CREATE TRIGGER no_claims BEFORE INSERT ON classified FOR EACH ROW EXECUTE FUNCTION refuse_claims()',
      );
      return () => sql.run('DROP TRIGGER no_claims ON classified');
    }
    await sql.run(
      "CREATE TEMP TRIGGER no_claims BEFORE INSERT ON classified BEGIN SELECT RAISE(ABORT, 'refused'); END",
    );
    return () => sql.run('DROP TRIGGER no_claims');
  }

  /** Counts every write of a `messages` row from now on (a trigger); returns how many so far. */
  async function countMessageWrites(store: Store): Promise<() => Promise<number>> {
    const sql = store.sql();
    if (sql.dialect === 'postgres') {
      await sql.run('CREATE TABLE message_writes (n integer)');
      await sql.run(
        'CREATE FUNCTION count_message_writes() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN INSERT INTO message_writes VALUES (1); RETURN NULL; END $$',
      );
      await sql.run(
        'CREATE TRIGGER message_writes AFTER UPDATE ON messages FOR EACH ROW EXECUTE FUNCTION count_message_writes()',
      );
    } else {
      await sql.run('CREATE TEMP TABLE message_writes (n INTEGER)');
      await sql.run(
        'CREATE TEMP TRIGGER message_writes AFTER UPDATE ON messages BEGIN INSERT INTO message_writes VALUES (1); END',
      );
    }
    return async () => (await sql.all('SELECT n FROM message_writes')).length;
  }

  test(`${kind}: a new message's charge writes its row once; one refused by the day's cap stays uncounted and pays in full later`, async () => {
    await withUser({ messagesPerDay: 1, backlogAllowance: 0 }, ['m1', 'm2'], async (h, connect, userId) => {
      const writes = await countMessageWrites(h.store);
      const c = await connect();
      assert.equal(await ask(c, 'm1'), 'spam_gc');
      assert.equal(await writes(), 1, 'one write of m1 for its frame and its count');
      assert.deepEqual(await charged(h.store, userId, 'm1'), {
        message: [{ frames: 1, counted: 1 }],
        minute: [{ count: 1 }],
      });
      // m2 finds the day's cap used up: refused, its row left uncounted (the mark taken back).
      assert.equal(await ask(c, 'm2', 4), 'daily_limit');
      assert.deepEqual(((await charged(h.store, userId, 'm2')) as { message: unknown }).message, [
        { frames: 1, counted: 0 },
      ]);
      // A new day: m2's next frame is a new message's, charged against the day, and then counted.
      await h.store.sql().run('DELETE FROM message_windows WHERE user_id = ?', [userId]);
      assert.equal(await ask(c, 'm2', 6), 'spam_gc');
      assert.deepEqual(await charged(h.store, userId, 'm2'), {
        message: [{ frames: 1, counted: 1 }],
        minute: [{ count: 3 }],
      });
      assert.deepEqual(await h.store.sql().all('SELECT count FROM message_windows WHERE user_id = ?', [userId]), [
        { count: 1 },
      ]);
      // Its next frame is one of its free ones: counted, no unit.
      assert.equal(await ask(c, 'm2', 8), 'already_classified');
      assert.deepEqual(await charged(h.store, userId, 'm2'), {
        message: [{ frames: 2, counted: 1 }],
        minute: [{ count: 3 }],
      });
      c.close();
    });
  });

  test(`${kind}: a spam_request whose claim fails leaves neither claim nor charge behind (message-rate.ts chargeAndClaim)`, async () => {
    await withUser({}, ['m1'], async (h, connect, userId) => {
      const c = await connect();
      const before = await charged(h.store, userId, 'm1');
      const allow = await refuseClaims(h.store);
      assert.equal(await ask(c, 'm1'), 'internal');
      assert.equal(await h.store.isClassified(userId, 'm1'), false);
      assert.deepEqual(await charged(h.store, userId, 'm1'), before, 'the charge was backed out with the claim');
      // Nothing was answered: the same request is charged and answered once the claim can be made.
      await allow();
      assert.equal(await ask(c, 'm1', 4), 'spam_gc');
      assert.deepEqual(await charged(h.store, userId, 'm1'), {
        message: [{ frames: 1, counted: 1 }],
        minute: [{ count: 1 }],
      });
    });
  });

  test(`${kind}: a spam_request whose charge is refused claims nothing, not even for a moment`, async () => {
    // Each limit 1 and used up before the request (the store counts it as that request's charge would).
    const refusals: [string, Partial<ServerLimits>, 'requests' | 'messages'][] = [
      ['rate_limited', { requestsPerMinute: 1 }, 'requests'],
      ['daily_limit', { messagesPerDay: 1, backlogAllowance: 0 }, 'messages'],
    ];
    for (const [code, limits, window] of refusals) {
      await withUser(limits, ['m1'], async (h, connect, userId) => {
        const c = await connect();
        assert.ok(await h.store.takeRate(userId, 1, Date.now(), window));
        assert.equal(await ask(c, 'm1'), code);
        // Not even a claim still in progress (attempt set): isClassified would not see one.
        assert.deepEqual(await h.store.sql().all('SELECT message_id FROM classified'), []);
      });
    }
  });

  test(`${kind}: a spam_request refused before its claim is charged as before, alone`, async () => {
    await withUser({}, ['m1', 'm2'], async (h, connect, userId) => {
      const c = await connect();
      const gc = await c.request('spam_request', 2, { messageId: 'm1', ...LWE });
      assert.equal(gc.name, 'spam_gc');
      // m1's spam_done is outstanding: refused, and m2's frame still counts (a request, a new message).
      const early = await c.request('spam_request', 3, { messageId: 'm2', ...LWE });
      assert.equal(early.name === 'error' && early.code, 'out_of_order');
      const count = (table: string) => h.store.sql().all(`SELECT count FROM ${table} WHERE user_id = ?`, [userId]);
      assert.deepEqual(await count('rate_windows'), [{ count: 2 }]);
      assert.deepEqual(await count('message_windows'), [{ count: 2 }]);
    });
  });
}

rateSuite('sqlite', async () => openSqliteStore(':memory:'));

describe('postgres', { skip: postgresMissing() }, () => {
  const postgres = suitePostgres();
  rateSuite('postgres', async () => openPostgresStore(await postgres.database()));
});
