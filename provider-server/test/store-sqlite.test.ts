// The SQLite store's own behaviour: group commit (writes of a turn in one
// transaction, the commit gap under load), answers that wait for the WAL's
// disk sync, a failed sync, pruning of rate windows, tokens kept as hashes.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { mock, test } from 'node:test';
import Database from 'better-sqlite3';
import { Store } from '../src/store.js';
import type { SqlDriver } from '../src/store-driver.js';
import { openSqliteStore } from '../src/store-sqlite.js';
import { RAW, REQ_A, tmp } from './store-fixtures.js';
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
