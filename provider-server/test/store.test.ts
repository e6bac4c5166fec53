// The store's rules, run the same way against both implementations: the
// embedded SQLite file and a real PostgreSQL 15 started for this file
// (postgres.ts). "Instances" are separate Store handles on one database, as
// several provider processes would hold.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, mock, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { Store, windowEnd, type SqlDriver } from '../src/store.js';
import { migratePostgres, openPostgresStore, POSTGRES_SCHEMA_VERSION } from '../src/store-postgres.js';
import { POSTGRES_FIRST, postgresSteps, sqliteSteps, WORDS } from '../src/store-schema.js';
import { migrateSqlite, openSqliteStore, SQLITE_SCHEMA_VERSION } from '../src/store-sqlite.js';
import { postgresMissing, startPostgres, type TestPostgres } from './postgres.js';
import { tempDir } from '../../scripts/test/temp-dir.js';

const RAW =
  'From: Alice <a@x.org>\r\nSubject: hello\r\n  world\r\nDate: Mon, 1 Jan 2024 00:00:00 +0000\r\n\r\n-----BEGIN PGP MESSAGE-----\r\n...';
const REQ_A = Buffer.alloc(32, 0xa);
const REQ_B = Buffer.alloc(32, 0xb);

/** A token of the issued form (pmf_ and 43 base64url characters) named for a test, and its stored SHA-256. */
const tokenNamed = (name: string): string => `pmf_${createHash('sha256').update(name).digest('base64url')}`;
const tokenSha = (token: string): Buffer => createHash('sha256').update(token).digest();

/** Opens handles on one fresh database of a kind. */
type Fresh = () => Promise<() => Promise<Store>>;

const tmp = (): string => tempDir('pmf-store-');

const sqliteFresh: Fresh = async () => {
  const file = path.join(tmp(), 'store.db');
  return async () => openSqliteStore(file);
};

let cluster: TestPostgres | undefined;
const postgresFresh: Fresh = async () => {
  const url = await cluster!.database();
  return () => openPostgresStore(url);
};

/** A claim recorded as answered (what a finished classification leaves). */
async function answered(store: Store, user: number, id: string, request = REQ_A): Promise<void> {
  const c = await store.claim(user, id, 'spam', request);
  assert.equal(typeof c, 'object', `claim of ${id}`);
  assert.equal(await store.recordAnswer(user, id, 'spam', (c as { attempt: Buffer }).attempt, Buffer.from('gc')), true);
}

/**
 * After the salt migration, of accounts 1 and 2 whose keys were at epochs 3
 * (40 used) and 1: each has its own salt, and its keys under it, being new
 * ones, start at the epoch after its last with their whole budget.
 */
async function assertSalted(store: Store): Promise<void> {
  const alice = (await store.userKey(1, 'spam', 1))!;
  const bob = (await store.userKey(2, 'spam', 1))!;
  assert.deepEqual({ epoch: alice.epoch, used: alice.used }, { epoch: 4, used: 0 });
  assert.deepEqual({ epoch: bob.epoch, used: bob.used }, { epoch: 2, used: 0 });
  assert.equal(alice.salt.length, 32);
  assert.notDeepEqual(alice.salt, bob.salt);
}

/** Runs one statement on a database of either kind, outside the store: `?` placeholders. */
type RawRun = (sql: string, params?: unknown[]) => Promise<unknown>;

/** Migrates the database behind `pool` to schema `to`, on one connection (the migration is one transaction). */
async function migratePool(pool: pg.Pool, to: number): Promise<void> {
  const client = await pool.connect();
  try {
    await migratePostgres(client, to);
  } finally {
    client.release();
  }
}

/**
 * The versions a deployed store can be at when the operations migrations
 * (health probes, sizes, token lifetimes, connection windows) first reach it:
 * written by the code before the accounts work (SQLite 7, PostgreSQL 3: user
 * keys from the account id) or by the accounts work (SQLite 9, PostgreSQL 5:
 * a key salt per account, OPRF windows). Rows as that code wrote them are
 * put in through `run`; opened by this code, they must serve on: tokens live
 * (their lifetime starts at the upgrade, not at 1970), the mail with its
 * size, the key epochs, the day's OPRF count, and what later migrations add
 * must work.
 */
async function assertUpgrades(run: RawRun, salted: boolean, open: () => Promise<Store>, latest: number): Promise<void> {
  const day = Math.floor(Date.now() / 86_400_000) * 86_400_000;
  const salts = [Buffer.alloc(32, 7), Buffer.alloc(32, 8)];
  for (const [i, name] of ['alice', 'bob'].entries()) {
    if (salted) await run('INSERT INTO users (name, created_at, key_salt) VALUES (?, 0, ?)', [name, salts[i]]);
    else await run('INSERT INTO users (name, created_at) VALUES (?, 0)', [name]);
    await run('INSERT INTO tokens (token_sha256, user_id, created_at) VALUES (?, ?, 0)', [
      tokenSha(tokenNamed(name)),
      i + 1,
    ]);
  }
  await run(
    "INSERT INTO messages (user_id, message_id, raw, from_addr, subject, date, delivered_at) VALUES (1, 'm', ?, '', '', '', 0)",
    [Buffer.from(RAW)],
  );
  if (salted) {
    await run("INSERT INTO key_epochs VALUES (?, 'spam', 1, 3, 40)", [salts[0]]);
    await run('INSERT INTO oprf_windows VALUES (1, ?, 32)', [day]);
  } else await run("INSERT INTO user_keys VALUES (1, 'spam', 1, 3, 40), (2, 'spam', 1, 1, 5)");

  const upgradedAfter = Math.floor(Date.now() / 1000) * 1000;
  const store = await open();
  assert.equal(await store.schemaVersion(), latest);
  assert.equal(await store.authenticate(tokenNamed('alice')), 1, 'a token issued before the upgrade lives on');
  const [token] = await store.tokens.list(1, { lifetimeMs: 3_600_000 });
  assert.equal(token.kind, 'cli');
  assert.ok(token.lastUsedAt >= upgradedAfter, `its lifetime starts at the upgrade (${token.lastUsedAt})`);
  assert.deepEqual(await store.getMessage(1, 'm'), { raw: RAW, bytes: Buffer.byteLength(RAW) });
  if (salted) {
    assert.deepEqual(await store.userKey(1, 'spam', 1), { salt: salts[0], epoch: 3, used: 40 }, 'key epochs stay');
    assert.equal(await store.takeRate(1, 33, day, 'oprf'), true);
    assert.equal(await store.takeRate(1, 33, day, 'oprf'), false, "the day's OPRF count goes on");
  } else await assertSalted(store);
  await store.probe('upgraded');
  assert.equal(await store.connections.take('a 192.0.2.1', 1), true);
  assert.equal(await store.connections.take('a 192.0.2.1', 1), false);
  assert.equal(await store.pruneBodies(Date.now()), 1, 'the kept body goes after its retention');
  assert.deepEqual(await store.getMessage(1, 'm'), { bytes: Buffer.byteLength(RAW) });
  assert.equal((await store.addUser('carol')).userId, 3);
  assert.equal(await store.deleteUser('bob'), 2);
  assert.equal(await store.authenticate(tokenNamed('bob')), undefined);
  await store.close();
}

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
  before(async () => {
    cluster = await startPostgres();
  });
  after(async () => {
    await cluster?.stop();
  });
  storeSuite('postgres', postgresFresh);

  test('both stores end with the same schema: tables, columns, their nullability, keys and indexes', async () => {
    // Both stores run the DDL store-schema.ts makes for their dialect (and the key-salt step
    // each writes itself): the schemas they end with must be the same.
    const file = path.join(tmp(), 'store.db');
    await (await openSqliteStore(file)).close();
    const lite = new Database(file, { readonly: true });
    const sqlite = new Map<string, string[]>();
    const tables = lite
      .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'")
      .pluck()
      .all() as string[];
    for (const t of tables) {
      const cols = lite.pragma(`table_info(${t})`) as { name: string; notnull: number; pk: number }[];
      // SQLite lets a primary-key column be NULL unless it says NOT NULL; PostgreSQL never does.
      sqlite.set(
        t,
        cols.map((c) => `${c.name}${c.notnull || c.pk ? ' not null' : ''}${c.pk ? ` pk${c.pk}` : ''}`),
      );
      for (const ix of lite.pragma(`index_list(${t})`) as { name: string; origin: string }[]) {
        if (ix.origin !== 'c') continue; // made by CREATE INDEX (not a key's own)
        const on = (lite.pragma(`index_info(${ix.name})`) as { name: string }[]).map((c) => c.name);
        sqlite.set(`index ${ix.name}`, [t, ...on]);
      }
    }
    lite.close();

    const url = await cluster!.database();
    await (await openPostgresStore(url)).close();
    const raw = new pg.Pool({ connectionString: url });
    const postgres = new Map<string, string[]>();
    const columns = await raw.query(
      `SELECT c.table_name, c.column_name, c.is_nullable,
              (SELECT k.ordinal_position FROM information_schema.key_column_usage k
                 JOIN information_schema.table_constraints tc ON tc.constraint_name = k.constraint_name AND tc.constraint_type = 'PRIMARY KEY'
                WHERE k.table_name = c.table_name AND k.column_name = c.column_name) AS pk
         FROM information_schema.columns c
        WHERE c.table_schema = 'public' AND c.table_name <> 'pmf_schema'
        ORDER BY c.table_name, c.ordinal_position`,
    );
    for (const r of columns.rows as { table_name: string; column_name: string; is_nullable: string; pk: number }[])
      postgres.set(r.table_name, [
        ...(postgres.get(r.table_name) ?? []),
        `${r.column_name}${r.is_nullable === 'NO' ? ' not null' : ''}${r.pk ? ` pk${r.pk}` : ''}`,
      ]);
    const indexes = await raw.query(
      `SELECT i.relname AS name, t.relname AS on_table, array_agg(a.attname::text ORDER BY k.n) AS cols
         FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid JOIN pg_class t ON t.oid = x.indrelid
         JOIN pg_namespace ns ON ns.oid = t.relnamespace
         CROSS JOIN LATERAL unnest(x.indkey) WITH ORDINALITY AS k(attnum, n)
         JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
        WHERE ns.nspname = 'public' AND NOT x.indisprimary AND NOT x.indisunique AND t.relname <> 'pmf_schema'
        GROUP BY i.relname, t.relname`,
    );
    for (const r of indexes.rows as { name: string; on_table: string; cols: string[] }[])
      postgres.set(`index ${r.name}`, [r.on_table, ...r.cols]);
    await raw.end();
    const sorted = (m: Map<string, string[]>) => [...m].sort(([a], [b]) => a.localeCompare(b));
    assert.ok(sqlite.size > 10, `${sqlite.size} tables and indexes read`);
    assert.deepEqual(sorted(postgres), sorted(sqlite));
  });

  test('postgres: an old schema is migrated (indexes, a key salt per account, key epochs one on), a newer one refused', async () => {
    const url = await cluster!.database();
    const raw = new pg.Pool({ connectionString: url });
    // A store of schema 1 with two accounts whose keys came from (id, epoch).
    await migratePool(raw, 1);
    await raw.query("INSERT INTO users (name, created_at) VALUES ('alice', 0), ('bob', 0)");
    await raw.query("INSERT INTO user_keys VALUES (1, 'spam', 1, 3, 40), (2, 'spam', 1, 1, 5)");
    const store = await openPostgresStore(url);
    assert.equal(await store.schemaVersion(), POSTGRES_SCHEMA_VERSION);
    await assertSalted(store);
    await store.close();
    const indexes = ['classified_unacknowledged', 'classified_user_unacknowledged'];
    const found = await raw.query('SELECT indexname FROM pg_indexes WHERE indexname = ANY($1) ORDER BY indexname', [
      indexes,
    ]);
    assert.deepEqual(
      found.rows.map((r: { indexname: string }) => r.indexname),
      indexes,
    );
    await raw.query('UPDATE pmf_schema SET version = 99');
    await raw.end();
    await assert.rejects(openPostgresStore(url), /newer than this server/);
    const bad = 'postgres://postgres:s3cret@localhost/none?host=/nonexistent-dir';
    await assert.rejects(
      openPostgresStore(bad),
      (e: Error) => /store postgres:/.test(e.message) && !/s3cret/.test(e.message),
    );
  });

  test('postgres: stores written before the accounts work (schema 3) and by it (schema 5) upgrade to the latest with their rows', async () => {
    for (const [from, salted] of [
      [3, false],
      [5, true],
    ] as const) {
      const url = await cluster!.database();
      const raw = new pg.Pool({ connectionString: url });
      await migratePool(raw, from);
      const run: RawRun = (sql, params = []) => {
        let n = 0;
        return raw.query(
          sql.replace(/\?/g, () => `$${++n}`),
          params,
        );
      };
      const open = async (): Promise<Store> => {
        await raw.end();
        return openPostgresStore(url);
      };
      await assertUpgrades(run, salted, open, POSTGRES_SCHEMA_VERSION);
    }
  });
});

test('one schema: the DDL of both dialects differs only in the dialect words, and PostgreSQL gets every step', () => {
  // PostgreSQL's DDL with SQLite's words must be SQLite's DDL (but for its storage hint, remote-index/schema.ts).
  const lite = sqliteSteps().map((d) => d.replace(/\)\s*WITHOUT ROWID;/g, ');'));
  const pg = postgresSteps().map((d) =>
    (['nowMs', 'serialKey', 'bytes', 'big'] as const).reduce(
      (text, word) => text.split(WORDS.postgres[word]).join(WORDS.sqlite[word]),
      d,
    ),
  );
  assert.equal(lite.length, SQLITE_SCHEMA_VERSION);
  assert.equal(pg.length, POSTGRES_SCHEMA_VERSION);
  assert.equal(pg[0], lite.slice(0, POSTGRES_FIRST).join('\n'));
  assert.deepEqual(pg.slice(1), lite.slice(POSTGRES_FIRST));
  for (const d of postgresSteps()) assert.doesNotMatch(d, /\bBLOB\b|strftime|WITHOUT ROWID|AUTOINCREMENT/);
  for (const d of sqliteSteps()) assert.doesNotMatch(d, /\bBYTEA\b|\bBIGINT\b|\bSERIAL\b|::/);
});

test('sqlite: tokens are stored only as hashes', async () => {
  const file = path.join(tmp(), 'store.db');
  const store = openSqliteStore(file);
  const { token } = await store.addUser('alice');
  await store.close();
  const bytes = fs.readFileSync(file);
  assert.equal(bytes.includes(Buffer.from(token)), false, 'plaintext token found in the database file');
});

test('sqlite: writes issued together commit together, each with its own outcome', async () => {
  const file = path.join(tmp(), 'store.db');
  const store = openSqliteStore(file);
  const a = (await store.addUser('alice')).userId;
  // One turn of the event loop: 30 deliveries, the last a duplicate of the first.
  const deliveries = Array.from({ length: 30 }, (_, i) => store.deliver(a, i === 29 ? 'm0' : `m${i}`, RAW));
  const outcomes = await Promise.allSettled(deliveries);
  assert.deepEqual(
    outcomes.map((o) => o.status),
    [...Array(29).fill('fulfilled'), 'rejected'],
  );
  assert.match(String((outcomes[29] as PromiseRejectedResult).reason), /already delivered/);
  // Another connection sees every committed write while the store is still open.
  const reader = new Database(file, { readonly: true });
  const count = reader.prepare('SELECT COUNT(*) AS n FROM messages WHERE user_id = ?').get(a) as { n: number };
  reader.close();
  assert.equal(count.n, 29);
  await store.close();
});

test('sqlite: while the event loop is busy, writes of consecutive turns wait for the commit gap and share a commit', async () => {
  // Three writes, each issued one turn after the one before (as a session's
  // dependent writes are): a busy provider commits them in two transactions,
  // an idle one in three, each in the turn after it was issued.
  const commitsOf = async (busy: boolean): Promise<number> => {
    // A gap of 50 ms: the three turns fall inside it however busy the machine running the test is.
    const store = openSqliteStore(path.join(tmp(), 'store.db'), { loop: { busy: () => busy }, commitGapMs: 50 });
    const a = (await store.addUser('alice')).userId;
    await new Promise((r) => setTimeout(r, 60)); // past the gap after addUser's commit
    const exec = mock.method(Database.prototype, 'exec');
    try {
      const written: Promise<unknown>[] = [];
      for (let i = 0; i < 3; i++) {
        written.push(store.deliver(a, `m${i}`, RAW));
        await new Promise((r) => setImmediate(r));
      }
      await Promise.all(written);
      return exec.mock.calls.filter((c) => c.arguments[0] === 'COMMIT').length;
    } finally {
      exec.mock.restore();
      await store.close();
    }
  };
  assert.equal(await commitsOf(false), 3);
  assert.equal(await commitsOf(true), 2);
});

/** Makes every WAL sync of the SQLite store wait for `gate()`, then sync for real; counts the syncs. */
async function gateSyncs(gate: () => Promise<void>): Promise<{ syncs: number; restore(): void }> {
  // The store opens its WAL once and keeps the handle: every FileHandle's datasync goes through the gate.
  const probe = await fs.promises.open(tmp(), 'r');
  const FileHandle = Object.getPrototypeOf(probe) as fs.promises.FileHandle;
  await probe.close();
  const datasync = FileHandle.datasync;
  const state = { syncs: 0, restore: () => m.mock.restore() };
  const m = mock.method(FileHandle, 'datasync', async function (this: fs.promises.FileHandle) {
    await gate();
    state.syncs++;
    return datasync.call(this);
  });
  return state;
}

test("sqlite: each user's past rate windows are dropped at its first request of a window, not at every request", async () => {
  const file = path.join(tmp(), 'store.db');
  const store = openSqliteStore(file);
  const a = (await store.addUser('a')).userId;
  const t0 = 1_700_000_040_000;
  for (const minute of [0, 1, 2]) for (let i = 0; i < 3; i++) await store.takeRate(a, 10, t0 + minute * 60_000);
  await store.takeRate(a, 10, t0 + 2 * 60_000, 'hello');
  await store.close();
  const reader = new Database(file, { readonly: true });
  try {
    const windows = reader.prepare('SELECT window_start, count FROM rate_windows WHERE user_id = ?').all(a);
    assert.deepEqual(windows, [{ window_start: t0 + 2 * 60_000 - (t0 % 60_000), count: 3 }]);
  } finally {
    reader.close();
  }

  // The statements each request costs, on a driver that records them.
  const statements: string[] = [];
  const recorder = {
    run: async (sql: string) => (statements.push(sql.split(' ')[0]), 0),
    all: async <T>(sql: string) => (statements.push(sql.split(' ')[0]), [{ count: 1 }] as T[]),
  } as unknown as SqlDriver;
  const counted = new Store(recorder);
  for (let i = 0; i < 3; i++) await counted.takeRate(7, 10, t0);
  await counted.takeRate(8, 10, t0);
  await counted.takeRate(7, 10, t0, 'hello');
  await counted.takeRate(7, 10, t0 + 60_000);
  const deletes = statements.filter((s) => s === 'DELETE').length;
  assert.equal(statements.length - deletes, 6, 'every request is counted');
  assert.equal(deletes, 4, "user 7 in two windows, user 8, user 7's hellos");
});

const committedAnswer = (file: string, user: number, id: string): Buffer | null | undefined => {
  const reader = new Database(file, { readonly: true });
  try {
    const row = reader
      .prepare("SELECT answer FROM classified WHERE user_id = ? AND message_id = ? AND task = 'spam'")
      .get(user, id) as { answer: Buffer | null } | undefined;
    return row?.answer;
  } finally {
    reader.close();
  }
};

/** A fresh SQLite store with alice's message m1 delivered; its WAL syncs go through `sync` while `body` runs. */
async function withGatedSyncs(
  sync: () => Promise<void>,
  body: (s: { store: Store; a: number; file: string; gated: Awaited<ReturnType<typeof gateSyncs>> }) => Promise<void>,
): Promise<void> {
  const file = path.join(tmp(), 'store.db');
  const store = openSqliteStore(file);
  const a = (await store.addUser('alice')).userId;
  await store.deliver(a, 'm1', RAW);
  const gated = await gateSyncs(sync);
  try {
    await body({ store, a, file, gated });
  } finally {
    gated.restore();
  }
  await store.close();
}

test('sqlite: an answer resolves only once the WAL is on disk, bookkeeping at its commit, and a resend waits too', async () => {
  let release!: () => void;
  const opened = new Promise<void>((r) => (release = r));
  await withGatedSyncs(
    () => opened,
    async ({ store, a, file, gated }) => {
      // Rate window, the message's rate marks, claim and key budget resolve without waiting for the disk.
      const soon = <T>(p: Promise<T>): Promise<T> =>
        Promise.race([
          p,
          new Promise<never>((_, no) => setTimeout(() => no(new Error('it waited for the disk')), 2000)),
        ]);
      assert.equal(await store.takeRate(a, 10), true);
      const { salt } = (await store.userKey(a, 'spam', 1))!;
      const rates = store.messageRates;
      assert.deepEqual(await soon(rates.run('frame', rates.frame(a, 'm1'))), { frames: 1, counted: false });
      await soon(rates.run('uncounted', rates.uncounted(a, 'm1')));
      assert.equal(await soon(rates.run('allowance', rates.takeAllowance(salt, 'messages', 1, 10))), true);
      const claim = await store.claim(a, 'm1', 'spam', REQ_A);
      assert.equal(typeof claim, 'object');
      assert.equal(await store.spendUserKey(salt, 'spam', 1, 1, 128), 'ok');
      let recorded = false;
      const record = store
        .recordAnswer(a, 'm1', 'spam', (claim as { attempt: Buffer }).attempt, Buffer.from('gc'))
        .then((ok) => ((recorded = true), ok));
      let resent = false;
      await new Promise((r) => setTimeout(r, 100));
      // Committed (another connection reads it) but not on disk: nobody may send it yet.
      assert.deepEqual(committedAnswer(file, a, 'm1'), Buffer.from('gc'));
      const resend = store.recordedAnswer(a, 'm1', 'spam', REQ_A).then((r) => ((resent = true), r));
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(recorded, false, 'the answer resolved before its commit was synced');
      assert.equal(resent, false, 'a resend read the answer before it was synced');
      assert.equal(gated.syncs, 0);
      release();
      assert.equal(await record, true);
      assert.deepEqual(await resend, { answer: Buffer.from('gc') });
      assert.ok(gated.syncs >= 1);
    },
  );
});

test('sqlite: a failed WAL sync fails the waiting answer and every write after it', async () => {
  await withGatedSyncs(
    () => Promise.reject(Object.assign(new Error('EIO: i/o error'), { code: 'EIO' })),
    async ({ store, a }) => {
      // A claim resolves at its commit: no sync yet.
      const claim = (await store.claim(a, 'm1', 'spam', REQ_A)) as { attempt: Buffer };
      await assert.rejects(store.recordAnswer(a, 'm1', 'spam', claim.attempt, Buffer.from('gc')), /syncing .* failed/);
      await assert.rejects(store.takeRate(a, 10), /syncing .* failed/);
      await assert.rejects(store.deliver(a, 'm2', RAW), /syncing .* failed/);
    },
  );
});

test('sqlite: migrations run once, old claims stay classified, and a newer schema is refused', async () => {
  const file = path.join(tmp(), 's.db');
  // a store of schema 4 (before exactly-once answers) with one classified message
  const db = new Database(file);
  migrateSqlite(db, 4);
  db.prepare("INSERT INTO users (id, name, created_at) VALUES (1, 'kept', 0)").run();
  db.prepare(
    "INSERT INTO messages (user_id, message_id, raw, from_addr, subject, date, delivered_at) VALUES (1, 'old', ?, '', '', '', 0)",
  ).run(Buffer.from(RAW));
  db.prepare("INSERT INTO classified VALUES (1, 'old', 'spam', 1)").run();
  db.close();
  const s2 = openSqliteStore(file);
  const v = await s2.schemaVersion();
  assert.equal(v, SQLITE_SCHEMA_VERSION);
  const a = (await s2.userId('kept'))!;
  assert.equal(a, 1);
  assert.equal(await s2.isClassified(a, 'old'), true, 'a claim from before migration 5 stays classified');
  assert.equal((await s2.getMessage(a, 'old'))?.bytes, Buffer.byteLength(RAW), 'migration 11 records the sizes');
  assert.equal(await s2.claim(a, 'old', 'spam', REQ_A), 'already_classified');
  await s2.close();
  const db2 = new Database(file);
  db2.pragma(`user_version = ${v + 1}`);
  db2.close();
  assert.throws(() => openSqliteStore(file), /newer than this server/);
});

test('sqlite: a store holding rows a raw delete left behind still migrates, and the rows open nothing', async () => {
  const file = path.join(tmp(), 's.db');
  const db = new Database(file);
  migrateSqlite(db, 8);
  db.prepare("INSERT INTO users (name, created_at, key_salt) VALUES ('gone', 0, randomblob(32))").run();
  db.prepare('INSERT INTO tokens VALUES (?, 1, 0)').run(tokenSha(tokenNamed('gone')));
  db.pragma('foreign_keys = OFF');
  db.prepare('DELETE FROM users').run();
  db.close();
  const store = openSqliteStore(file);
  assert.equal(await store.schemaVersion(), SQLITE_SCHEMA_VERSION);
  assert.equal(await store.authenticate(tokenNamed('gone')), undefined);
  await store.close();
});

test('sqlite: migration 8 salts every account, moves its key epochs on, drops what raw deletes left and never reuses an id', async () => {
  const file = path.join(tmp(), 's.db');
  const db = new Database(file);
  migrateSqlite(db, 7);
  for (const [id, name] of [
    [1, 'alice'],
    [2, 'bob'],
    [3, 'carol'],
  ] as const) {
    db.prepare('INSERT INTO users (id, name, created_at) VALUES (?, ?, 0)').run(id, name);
    db.prepare('INSERT INTO tokens VALUES (?, ?, 0)').run(tokenSha(tokenNamed(name)), id);
    db.prepare(
      "INSERT INTO messages (user_id, message_id, raw, from_addr, subject, date, delivered_at) VALUES (?, 'm', ?, '', '', '', 0)",
    ).run(id, Buffer.from(RAW));
  }
  db.prepare("INSERT INTO user_keys VALUES (1, 'spam', 1, 3, 40), (2, 'spam', 1, 1, 5), (3, 'spam', 1, 1, 9)").run();
  // carol deleted as the sqlite3 shell does, foreign keys off: her token and message stay behind
  db.pragma('foreign_keys = OFF');
  db.prepare('DELETE FROM users WHERE id = 3').run();
  db.close();

  const store = openSqliteStore(file);
  await assertSalted(store);
  assert.equal(await store.authenticate(tokenNamed('alice')), 1);
  assert.equal(await store.authenticate(tokenNamed('carol')), undefined, "carol's token is gone");
  assert.equal(await store.getMessage(3, 'm'), undefined, 'and so is her message');
  // A new account never takes an id a row named, carol's included.
  const dave = await store.addUser('dave');
  assert.equal(dave.userId, 4);
  await store.deleteUser('dave');
  assert.equal((await store.addUser('erin')).userId, 5);
  // Foreign keys hold again: deleting alice takes her token.
  await store.deleteUser('alice');
  assert.equal(await store.authenticate(tokenNamed('alice')), undefined);
  await store.close();
});

test('sqlite: stores written before the accounts work (schema 7) and by it (schema 9) upgrade to the latest with their rows', async () => {
  for (const [from, salted] of [
    [7, false],
    [9, true],
  ] as const) {
    const file = path.join(tmp(), 's.db');
    const db = new Database(file);
    migrateSqlite(db, from);
    const run: RawRun = async (sql, params = []) => db.prepare(sql).run(...params);
    const open = async (): Promise<Store> => {
      db.close();
      return openSqliteStore(file);
    };
    await assertUpgrades(run, salted, open, SQLITE_SCHEMA_VERSION);
  }
});
