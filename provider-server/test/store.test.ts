// The store's rules, run the same way against both implementations: the
// embedded SQLite file and a real PostgreSQL 15 started for this file
// (postgres.ts). "Instances" are separate Store handles on one database, as
// several provider processes would hold.
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import { Store, windowEnd } from '../src/store.js';
import { openPostgresStore } from '../src/store-postgres.js';
import { openSqliteStore } from '../src/store-sqlite.js';
import { postgresMissing } from './postgres.js';
import { suitePostgres } from './postgres-suite.js';
import { answered, RAW, REQ_A, REQ_B, tmp } from './store-fixtures.js';

/** Opens handles on one fresh database of a kind. */
type Fresh = () => Promise<() => Promise<Store>>;

const sqliteFresh: Fresh = async () => {
  const file = path.join(tmp(), 'store.db');
  return async () => openSqliteStore(file);
};

function storeSuite(kind: string, fresh: Fresh): void {
  const open = async (): Promise<Store> => (await fresh())();

  test(`${kind}: tokens authenticate their user; unknown, revoked and malformed tokens do not`, async () => {
    const store = await open();
    const alice = await store.addUser('alice');
    const bob = await store.addUser('bob');
    assert.equal(await store.authenticate(alice.token), alice.userId);
    assert.equal(await store.authenticate(bob.token), bob.userId);
    assert.equal(await store.authenticate(alice.token + 'x'), undefined);
    assert.equal(await store.authenticate(''), undefined);
    await assert.rejects(store.addUser('alice'), /already exists/);
    await assert.rejects(store.addUser('bad name'), /must match/);
    await store.revokeToken(bob.token);
    assert.equal(await store.authenticate(bob.token), undefined);
    await store.close();
  });

  test(`${kind}: issued tokens are fresh, prefixed and safe to pass on a command line`, async () => {
    const store = await open();
    const { userId } = await store.addUser('carol');
    const many = { lifetimeMs: 86_400_000, perUser: 100 }; // none revoked by the per-user cap (tokens.test.ts)
    const tokens = await Promise.all(Array.from({ length: 100 }, () => store.issueToken(userId, 'cli', many)));
    assert.equal(new Set(tokens).size, tokens.length);
    for (const t of tokens) {
      // 32 random bytes in base64url behind the prefix; a leading "-" would be
      // taken for an option by the CLIs (it happened: ~1 in 64 tokens).
      assert.match(t, /^pmf_[A-Za-z0-9_-]{43}$/);
      assert.equal(await store.authenticate(t), userId);
    }
    await store.close();
  });

  test(`${kind}: a delivered message is claimed at most once per user; unknown and foreign ids are refused`, async () => {
    const store = await open();
    const a = (await store.addUser('a')).userId;
    const b = (await store.addUser('b')).userId;
    await store.deliver(a, 'm1', RAW);
    await answered(store, a, 'm1');
    assert.equal(await store.claim(a, 'm1', 'spam', REQ_A), 'already_classified', 'same request again');
    assert.equal(await store.claim(a, 'm1', 'spam', REQ_B), 'already_classified', 'another request');
    assert.equal(await store.claim(b, 'm1', 'spam', REQ_A), 'unknown_message', 'foreign id');
    assert.equal(await store.claim(a, 'nope', 'spam', REQ_A), 'unknown_message');
    assert.equal(await store.isClassified(a, 'm1'), true);
    assert.equal(await store.isClassified(a, 'm1', 'topics'), false, 'tasks are claimed apart');
    // the same id delivered to b is b's own message
    await store.deliver(b, 'm1', RAW);
    assert.equal(typeof (await store.claim(b, 'm1', 'spam', REQ_A)), 'object');
    await assert.rejects(store.deliver(a, 'm1', RAW), /already delivered/);
    await assert.rejects(store.deliver(999, 'x', RAW), /does not exist/);
    await assert.rejects(store.deliver(a, 'x'.repeat(257), RAW), /message id/);
    await store.close();
  });

  test(`${kind}: a claim whose answer was never recorded is taken over; the old attempt can no longer record`, async () => {
    const store = await open();
    const a = (await store.addUser('a')).userId;
    await store.deliver(a, 'm', RAW);
    const first = (await store.claim(a, 'm', 'spam', REQ_A)) as { attempt: Buffer };
    assert.equal(await store.isClassified(a, 'm'), false, 'nothing left yet');
    // e.g. the provider crashed before recording: a new request takes the claim over
    const second = (await store.claim(a, 'm', 'spam', REQ_B)) as { attempt: Buffer };
    assert.ok(!second.attempt.equals(first.attempt));
    assert.equal(await store.recordAnswer(a, 'm', 'spam', first.attempt, Buffer.from('old')), false);
    await store.releaseClaim(a, 'm', 'spam', first.attempt); // a stale release does nothing
    assert.equal(await store.recordAnswer(a, 'm', 'spam', second.attempt, Buffer.from('new')), true);
    assert.equal(await store.claim(a, 'm', 'spam', REQ_A), 'already_classified');
    // a released claim (nothing left the provider) can be claimed again
    await store.deliver(a, 'm2', RAW);
    const c = (await store.claim(a, 'm2', 'spam', REQ_A)) as { attempt: Buffer };
    await store.releaseClaim(a, 'm2', 'spam', c.attempt);
    assert.equal(await store.recordedAnswer(a, 'm2', 'spam', REQ_A), 'not_answered');
    assert.equal(typeof (await store.claim(a, 'm2', 'spam', REQ_B)), 'object');
    await store.close();
  });

  test(`${kind}: the recorded answer goes only to the same user's same request, until acknowledged`, async () => {
    const store = await open();
    const a = (await store.addUser('a')).userId;
    const b = (await store.addUser('b')).userId;
    await store.deliver(a, 'm', RAW);
    await store.deliver(b, 'm', RAW);
    assert.equal(await store.recordedAnswer(a, 'm', 'spam', REQ_A), 'not_answered', 'never claimed');
    const c = (await store.claim(a, 'm', 'spam', REQ_A)) as { attempt: Buffer };
    assert.equal(await store.recordedAnswer(a, 'm', 'spam', REQ_A), 'not_answered', 'claimed, not recorded');
    await store.recordAnswer(a, 'm', 'spam', c.attempt, Buffer.from('the gc'));
    assert.deepEqual(await store.recordedAnswer(a, 'm', 'spam', REQ_A), { answer: Buffer.from('the gc') });
    assert.equal(await store.recordedAnswer(a, 'm', 'spam', REQ_B), 'already_classified', 'other request');
    assert.equal(await store.recordedAnswer(a, 'm', 'topics', REQ_A), 'not_answered', 'other task');
    assert.equal(await store.recordedAnswer(b, 'm', 'spam', REQ_A), 'not_answered', "b's own message");
    assert.equal(await store.recordedAnswer(a, 'zz', 'spam', REQ_A), 'unknown_message');
    await store.acknowledge(a, 'm', 'spam', REQ_B); // another request's acknowledgement changes nothing
    assert.deepEqual(await store.recordedAnswer(a, 'm', 'spam', REQ_A), { answer: Buffer.from('the gc') });
    await store.acknowledge(a, 'm', 'spam', REQ_A);
    assert.equal(await store.recordedAnswer(a, 'm', 'spam', REQ_A), 'already_classified');
    assert.equal(await store.isClassified(a, 'm'), true);
    await store.close();
  });

  test(`${kind}: recorded answers nobody acknowledged are dropped after the retention; claims stay`, async () => {
    const store = await open();
    const a = (await store.addUser('a')).userId;
    for (const id of ['old', 'open']) await store.deliver(a, id, RAW);
    const c = (await store.claim(a, 'old', 'spam', REQ_A)) as { attempt: Buffer };
    await store.recordAnswer(a, 'old', 'spam', c.attempt, Buffer.from('the gc'));
    await store.claim(a, 'open', 'spam', REQ_A); // in flight: no answer recorded yet
    assert.equal(await store.pruneAnswers(Date.now() - 60_000), 0, 'younger than the cutoff');
    assert.deepEqual(await store.recordedAnswer(a, 'old', 'spam', REQ_A), { answer: Buffer.from('the gc') });
    assert.equal(await store.pruneAnswers(Date.now() + 1000), 1);
    assert.equal(await store.recordedAnswer(a, 'old', 'spam', REQ_A), 'already_classified');
    assert.equal(await store.isClassified(a, 'old'), true);
    assert.equal(
      await store.recordedAnswer(a, 'open', 'spam', REQ_A),
      'not_answered',
      'an attempt in flight is left alone',
    );
    assert.equal(await store.pruneAnswers(Date.now() + 1000), 0);
    await store.close();
  });

  test(`${kind}: a user's unacknowledged answers beyond the cap are dropped oldest first; others stay`, async () => {
    const store = await open();
    const [a, b] = [(await store.addUser('a')).userId, (await store.addUser('b')).userId];
    const ids = ['m1', 'm2', 'm3', 'm4', 'm5'];
    for (const id of [...ids, 'open']) await store.deliver(a, id, RAW);
    await store.deliver(b, 'm1', RAW);
    await answered(store, b, 'm1');
    for (const id of ids) {
      await answered(store, a, id);
      await new Promise((r) => setTimeout(r, 2)); // distinct claim times
    }
    const inFlight = (await store.claim(a, 'open', 'spam', REQ_A)) as { attempt: Buffer }; // in flight: no answer yet
    await store.acknowledge(a, 'm5', 'spam', REQ_A);
    assert.equal(await store.capAnswers(a, 4), 0, 'four unacknowledged answers are within a cap of 4');
    assert.equal(await store.capAnswers(a, 2), 2);
    const left = await Promise.all(ids.map(async (id) => store.recordedAnswer(a, id, 'spam', REQ_A)));
    assert.deepEqual(left, [
      'already_classified',
      'already_classified',
      { answer: Buffer.from('gc') },
      { answer: Buffer.from('gc') },
      'already_classified',
    ]);
    assert.equal(await store.isClassified(a, 'm1'), true, 'the claims stay');
    assert.equal(await store.recordedAnswer(a, 'open', 'spam', REQ_A), 'not_answered');
    assert.deepEqual(await store.recordedAnswer(b, 'm1', 'spam', REQ_A), { answer: Buffer.from('gc') }, 'other users');
    // An answer recorded with a cap of 1 counts itself: the one before it goes.
    assert.equal(await store.recordAnswer(a, 'open', 'spam', inFlight.attempt, Buffer.from('gc'), 1), true);
    assert.equal(await store.recordedAnswer(a, 'm3', 'spam', REQ_A), 'already_classified');
    assert.equal(await store.recordedAnswer(a, 'm4', 'spam', REQ_A), 'already_classified');
    assert.deepEqual(await store.recordedAnswer(a, 'open', 'spam', REQ_A), { answer: Buffer.from('gc') });
    assert.equal(await store.recordAnswer(a, 'open', 'spam', inFlight.attempt, Buffer.from('gc'), 1), false, 'once');
    await store.close();
  });

  test(`${kind}: the delivered-message registry keeps the raw MIME and its outer headers`, async () => {
    const store = await open();
    const a = (await store.addUser('a')).userId;
    await store.deliver(a, 'm1', RAW);
    assert.deepEqual(await store.listMessages(a), [
      {
        id: 'm1',
        from: 'Alice <a@x.org>',
        subject: 'hello world',
        date: 'Mon, 1 Jan 2024 00:00:00 +0000',
        folder: 'inbox',
      },
    ]);
    assert.equal(await store.moveMessage(a, 'm1', 'junk'), true);
    assert.deepEqual(await store.listMessages(a, 'inbox'), []);
    assert.deepEqual(
      (await store.listMessages(a, 'junk')).map((m) => m.id),
      ['m1'],
    );
    assert.equal(await store.moveMessage(a, 'nope', 'junk'), false);
    assert.equal((await store.getMessage(a, 'm1'))?.raw, RAW);
    assert.equal(await store.getMessage(a, 'm2'), undefined);
    assert.deepEqual(await store.listMessages((await store.addUser('c')).userId), []);
    await store.close();
  });

  test(`${kind}: without keepBody only the id and size are kept; kept bodies go after their retention, claims stay`, async () => {
    const store = await open();
    const a = (await store.addUser('a')).userId;
    await store.deliver(a, 'lmtp', RAW, { keepBody: false }); // Dovecot holds it
    assert.deepEqual(await store.getMessage(a, 'lmtp'), { bytes: Buffer.byteLength(RAW) });
    assert.deepEqual(await store.listMessages(a), [{ id: 'lmtp', from: '', subject: '', date: '', folder: 'inbox' }]);
    await store.deliver(a, 'demo', RAW);
    assert.equal(await store.pruneBodies(Date.now() - 60_000), 0, 'within the retention');
    assert.equal((await store.getMessage(a, 'demo'))?.raw, RAW);
    await answered(store, a, 'demo');
    assert.equal(await store.pruneBodies(Date.now() + 1), 1, 'past it: the one kept body');
    assert.deepEqual(await store.getMessage(a, 'demo'), { bytes: Buffer.byteLength(RAW) });
    assert.equal(await store.isClassified(a, 'demo'), true, 'its claim stays: never classified twice');
    assert.equal(await store.claim(a, 'demo', 'spam', REQ_B), 'already_classified');
    assert.equal(typeof (await store.claim(a, 'lmtp', 'spam', REQ_A)), 'object', 'a bodiless delivery is classified');
    assert.equal((await store.listMessages(a)).find((m) => m.id === 'demo')?.subject, 'hello world');
    await store.close();
  });

  test(`${kind}: topics and the opt-out are recorded per user`, async () => {
    const store = await open();
    const a = (await store.addUser('a')).userId;
    await store.deliver(a, 'm1', RAW);
    await store.deliver(a, 'm2', RAW);
    await store.recordTopic(a, 'm1', 'topics', 1, 3);
    await store.recordTopic(a, 'm2', 'topics', 1, -1);
    assert.equal(await store.topicOf(a, 'm1'), 3);
    assert.equal(await store.topicOf(a, 'm2'), undefined, 'no topic');
    assert.deepEqual(await store.topicCounts(), [{ modelId: 'topics', version: 1, topic: 3, count: 1 }]);
    assert.deepEqual(
      (await store.topicHistory(a)).map(({ messageId, modelId, version, topic }) => ({
        messageId,
        modelId,
        version,
        topic,
      })),
      [{ messageId: 'm1', modelId: 'topics', version: 1, topic: 3 }],
    );
    assert.equal(await store.topicOptOut(a), false);
    await store.setTopicOptOut(a, true);
    assert.equal(await store.topicOptOut(a), true);
    await store.setTopicOptOut(a, false);
    assert.equal(await store.topicOptOut(a), false);
    await store.close();
  });

  test(`${kind}: the rate limit counts per user and per minute window`, async () => {
    const store = await open();
    const a = (await store.addUser('a')).userId;
    const b = (await store.addUser('b')).userId;
    const t0 = 1_700_000_040_000;
    const taken = [];
    for (let i = 0; i < 4; i++) taken.push(await store.takeRate(a, 3, t0));
    assert.deepEqual(taken, [true, true, true, false]);
    assert.equal(await store.takeRate(b, 3, t0), true, 'other users are unaffected');
    assert.equal(await store.takeRate(a, 3, t0, 'hello'), true, 'hellos are counted apart');
    assert.equal(await store.takeRate(a, 3, t0 + 60_000), true, 'a new window starts fresh');
    await store.close();
  });

  test(`${kind}: OPRF evaluations are counted per user and UTC day, a request's all or none`, async () => {
    const store = await open();
    const a = (await store.addUser('a')).userId;
    const day = 86_400_000;
    const t0 = 20_000 * day + 5 * 3_600_000; // 05:00 UTC
    const take = (now: number, amount = 32) => store.takeRate(a, 80, now, 'oprf', amount);
    assert.deepEqual([await take(t0), await take(t0 + 3_600_000), await take(t0 + 2 * 3_600_000)], [true, true, false]);
    assert.equal(await take(t0, 16), true, 'what is left (16) is taken by a request that fits');
    assert.equal(await take(t0, 1), false);
    assert.equal(await store.takeRate(a, 3, t0), true, 'requests per minute are counted apart');
    assert.equal(await take(t0 + 19 * 3_600_000 - 1), false, 'until 23:59:59.999');
    assert.equal(await take(t0 + 19 * 3_600_000), true, 'the next day starts fresh at 00:00 UTC');
    assert.equal(await take(t0 + 19 * 3_600_000, 81), false, 'more than the cap at once: refused, not counted');
    assert.equal(await take(t0 + 19 * 3_600_000, 48), true);
    assert.equal(windowEnd('oprf', t0), t0 + 19 * 3_600_000);
    await store.close();
  });

  test(`${kind}: instances sharing the store race for claims, rates, connection counts and the key budget, and never both win`, async () => {
    const openShared = await fresh();
    const stores = [await openShared(), await openShared(), await openShared()];
    const [s0] = stores;
    const a = (await s0.addUser('a')).userId;
    for (let i = 0; i < 20; i++) await s0.deliver(a, `m${i}`, RAW);
    // every message claimed by all instances at once, each with its own request
    for (let i = 0; i < 20; i++) {
      const claims = await Promise.all(stores.map((s, k) => s.claim(a, `m${i}`, 'spam', Buffer.alloc(32, k))));
      const recorded = await Promise.all(
        claims.map((c, k) =>
          typeof c === 'object' ? stores[k].recordAnswer(a, `m${i}`, 'spam', c.attempt, Buffer.from([k])) : false,
        ),
      );
      assert.equal(recorded.filter(Boolean).length, 1, `exactly one answer recorded for m${i}`);
    }
    const t0 = 1_700_000_040_000;
    const rates = await Promise.all(Array.from({ length: 30 }, (_, i) => stores[i % 3].takeRate(a, 10, t0)));
    assert.equal(rates.filter(Boolean).length, 10, 'the per-user rate limit holds across instances');
    const connections = await Promise.all(
      Array.from({ length: 30 }, (_, i) => stores[i % 3].connections.take('a 203.0.113.7', 10, t0)),
    );
    assert.equal(connections.filter(Boolean).length, 10, 'new connections per address too');
    assert.equal(await s0.connections.take('a 203.0.113.7', 10, t0 + 60_000), true, 'a new minute, a new count');
    assert.equal(await s0.connections.prune(t0 + 60_000), 1, 'past windows are dropped');
    // 40 decryptions asked under epoch 1 with a budget of 10: at most 10 served
    const { salt } = (await s0.userKey(a, 'spam', 1))!;
    const spent = await Promise.all(
      Array.from({ length: 40 }, (_, i) => stores[i % 3].spendUserKey(salt, 'spam', 1, 1, 10)),
    );
    assert.ok(spent.filter((r) => r === 'ok').length <= 10, `${spent.filter((r) => r === 'ok').length} served`);
    assert.ok((await s0.userKey(a, 'spam', 1))!.epoch >= 2, 'the key rotated');
    for (const s of stores) await s.close();
  });

  test(`${kind}: a deleted account takes its tokens and mail; its id and key salt never return, its key epochs stay`, async () => {
    const store = await open();
    await store.addUser('a');
    const b = await store.addUser('b'); // the highest id, which SQLite reused before AUTOINCREMENT
    await store.deliver(b.userId, 'm1', RAW);
    await answered(store, b.userId, 'm1');
    assert.equal(await store.takeRate(b.userId, 10), true);
    const old = (await store.userKey(b.userId, 'spam', 1))!;
    assert.equal(await store.spendUserKey(old.salt, 'spam', 1, 1, 8, 3), 'ok');

    assert.equal(await store.deleteUser('b'), b.userId);
    assert.equal(await store.deleteUser('b'), undefined, 'gone');
    assert.equal(await store.authenticate(b.token), undefined);
    assert.equal(await store.getMessage(b.userId, 'm1'), undefined);
    assert.equal(await store.isClassified(b.userId, 'm1'), false);
    assert.equal(await store.userKey(b.userId, 'spam', 1), undefined);

    const again = await store.addUser('b');
    assert.ok(again.userId > b.userId, `id ${again.userId} after ${b.userId}`);
    const fresh = (await store.userKey(again.userId, 'spam', 1))!;
    assert.notDeepEqual(fresh.salt, old.salt);
    assert.deepEqual({ epoch: fresh.epoch, used: fresh.used }, { epoch: 1, used: 0 });
    // The deleted account's key goes on where it was: 3 of 8 used, so 4 more leave too few and rotate it.
    assert.equal(await store.spendUserKey(old.salt, 'spam', 1, 1, 8, 4), 'ok');
    assert.equal(await store.spendUserKey(old.salt, 'spam', 1, 1, 8, 1), 'rotated');
    await store.close();
  });

  test(`${kind}: the key budget rotates the epoch before it is overrun`, async () => {
    const store = await open();
    const a = (await store.addUser('a')).userId;
    const { salt, ...state } = (await store.userKey(a, 'spam', 1))!;
    assert.deepEqual(state, { epoch: 1, used: 0 });
    assert.equal(await store.spendUserKey(salt, 'spam', 1, 1, 5, 2), 'ok');
    assert.equal(await store.spendUserKey(salt, 'spam', 1, 1, 5, 2), 'ok', 'leaves 1 < 2: rotates after');
    assert.deepEqual(await store.userKey(a, 'spam', 1), { salt, epoch: 2, used: 0 });
    assert.equal(await store.spendUserKey(salt, 'spam', 1, 1, 5, 2), 'rotated', 'old epoch');
    assert.equal(await store.spendUserKey(salt, 'spam', 1, 2, 5, 1), 'ok');
    await assert.rejects(store.spendUserKey(salt, 'spam', 1, 2, 5, 6), /above the key budget/);
    await store.close();
  });

  test(`${kind}: a claim spends its key budget with it; a used-up key releases it, a refused claim spends nothing, racing instances never overspend`, async () => {
    const openShared = await fresh();
    const stores = [await openShared(), await openShared(), await openShared()];
    const [store] = stores;
    const a = (await store.addUser('a')).userId;
    for (let i = 0; i < 16; i++) await store.deliver(a, `m${i}`, RAW);
    const { salt } = (await store.userKey(a, 'spam', 1))!;
    const spend = (epoch: number, budget = 2) => ({ salt, modelId: 'spam', version: 1, epoch, budget, count: 1 });
    const claims = async (): Promise<number> =>
      Number(
        (await store.sql().all<{ n: number }>('SELECT COUNT(*) AS n FROM classified WHERE user_id = ?', [a]))[0].n,
      );
    const used = async () => {
      const { epoch, used } = (await store.userKey(a, 'spam', 1))!;
      return { epoch, used };
    };

    const c0 = await store.claimAndSpend(a, 'm0', 'spam', REQ_A, spend(1));
    assert.equal(typeof c0, 'object');
    assert.deepEqual(await used(), { epoch: 1, used: 1 });
    assert.equal(await store.recordAnswer(a, 'm0', 'spam', (c0 as { attempt: Buffer }).attempt, null), true);
    assert.equal(await store.claimAndSpend(a, 'm0', 'spam', REQ_B, spend(1)), 'already_classified');
    assert.equal(await store.claimAndSpend(a, 'nope', 'spam', REQ_A, spend(1)), 'unknown_message');
    assert.deepEqual(await used(), { epoch: 1, used: 1 }, 'refused claims spend nothing');
    assert.equal(
      typeof (await store.claimAndSpend(a, 'm1', 'spam', REQ_A, spend(1))),
      'object',
      'leaves 1: rotates after',
    );
    assert.deepEqual(await used(), { epoch: 2, used: 0 });
    assert.equal(await store.claimAndSpend(a, 'm2', 'spam', REQ_A, spend(1)), 'rotated');
    assert.equal(await claims(), 2, 'the claim of a used-up key is released');
    await assert.rejects(store.claimAndSpend(a, 'm2', 'spam', REQ_A, spend(2, 0)), /above the key budget/);

    // Twelve messages claimed at once by three instances under epoch 2, budget 5: five served, five claims kept.
    const raced = await Promise.all(
      Array.from({ length: 12 }, (_, i) => stores[i % 3].claimAndSpend(a, `m${i + 3}`, 'spam', REQ_A, spend(2, 5))),
    );
    assert.equal(raced.filter((c) => typeof c === 'object').length, 5);
    assert.equal(raced.filter((c) => c === 'rotated').length, 7);
    assert.equal(await claims(), 2 + 5);
    assert.deepEqual(await used(), { epoch: 3, used: 0 });
    for (const s of stores) await s.close();
  });
}

storeSuite('sqlite', sqliteFresh);

const missing = postgresMissing();
describe('postgres', { skip: missing }, () => {
  const cluster = suitePostgres();
  storeSuite('postgres', async () => {
    const url = await cluster.database();
    return () => openPostgresStore(url);
  });
});
