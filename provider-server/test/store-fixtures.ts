// What the store's test files share: rows as the code writes them, fresh
// stores of either kind, and the checks of an upgraded store.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import pg from 'pg';
import type { Store } from '../src/store.js';
import { migratePostgres } from '../src/store-postgres.js';
import { tempDir } from '../../scripts/test/temp-dir.js';

export const RAW =
  'From: Alice <a@x.org>\r\nSubject: hello\r\n  world\r\nDate: Mon, 1 Jan 2024 00:00:00 +0000\r\n\r\n-----BEGIN PGP MESSAGE-----\r\n...';
export const REQ_A = Buffer.alloc(32, 0xa);
export const REQ_B = Buffer.alloc(32, 0xb);

/** A token of the issued form (pmf_ and 43 base64url characters) named for a test, and its stored SHA-256. */
export const tokenNamed = (name: string): string => `pmf_${createHash('sha256').update(name).digest('base64url')}`;
export const tokenSha = (token: string): Buffer => createHash('sha256').update(token).digest();

export const tmp = (): string => tempDir('pmf-store-');

/** A claim recorded as answered (what a finished classification leaves). */
export async function answered(store: Store, user: number, id: string, request = REQ_A): Promise<void> {
  const c = await store.claim(user, id, 'spam', request);
  assert.equal(typeof c, 'object', `claim of ${id}`);
  assert.equal(await store.recordAnswer(user, id, 'spam', (c as { attempt: Buffer }).attempt, Buffer.from('gc')), true);
}

/**
 * After the salt migration, of accounts 1 and 2 whose keys were at epochs 3
 * (40 used) and 1: each has its own salt, and its keys under it, being new
 * ones, start at the epoch after its last with their whole budget.
 */
export async function assertSalted(store: Store): Promise<void> {
  const alice = (await store.userKey(1, 'spam', 1))!;
  const bob = (await store.userKey(2, 'spam', 1))!;
  assert.deepEqual({ epoch: alice.epoch, used: alice.used }, { epoch: 4, used: 0 });
  assert.deepEqual({ epoch: bob.epoch, used: bob.used }, { epoch: 2, used: 0 });
  assert.equal(alice.salt.length, 32);
  assert.notDeepEqual(alice.salt, bob.salt);
}

/** Runs one statement on a database of either kind, outside the store: `?` placeholders. */
export type RawRun = (sql: string, params?: unknown[]) => Promise<unknown>;

/** Migrates the database behind `pool` to schema `to`, on one connection (the migration is one transaction). */
export async function migratePool(pool: pg.Pool, to: number): Promise<void> {
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
export async function assertUpgrades(
  run: RawRun,
  salted: boolean,
  open: () => Promise<Store>,
  latest: number,
): Promise<void> {
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
