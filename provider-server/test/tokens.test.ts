// Bearer tokens are bounded (tokens.ts): they expire unused, each use
// refreshes them, a user holds at most tokensPerUser, and a user (GET/DELETE
// /tokens) or the operator (the CLI) lists and revokes them. On SQLite and a
// real PostgreSQL, then against a running server: an expired or revoked
// token is refused at hello, and a webmail minting 90 tokens a minute leaves
// no more than the cap alive.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import { main } from '../src/cli.js';
import { openStore } from '../src/provider.js';
import type { Store } from '../src/store.js';
import { openPostgresStore } from '../src/store-postgres.js';
import { openSqliteStore } from '../src/store-sqlite.js';
import type { TokenPolicy } from '../src/tokens.js';
import { tempDir } from '../../scripts/test/temp-dir.js';
import { NONCE, startHarness, TestClient, type Harness } from './harness.js';
import { postgresMissing } from './postgres.js';
import { suitePostgres } from './postgres-suite.js';

const DAY = 86_400_000;
const POLICY: TokenPolicy = { lifetimeMs: 30 * DAY, perUser: 3 };
const T0 = Date.UTC(2030, 0, 1);

/** A store and a way to delete a user behind its back, as `delete-user` will. */
type Open = () => Promise<{ store: Store; deleteUser(id: number): Promise<void>; close(): Promise<void> }>;

function tokenSuite(kind: string, open: Open): void {
  test(`${kind}: a token expires unused; each use refreshes it`, async () => {
    const { store, close } = await open();
    try {
      const { userId } = await store.addUser('alice');
      const t = await store.tokens.issue(userId, 'cli', POLICY, T0);
      const at = (days: number) => store.tokens.authenticate(t, POLICY, T0 + days * DAY);
      assert.equal(((await at(29)) as { userId: number }).userId, userId, 'used on day 29');
      assert.equal(typeof (await at(58)), 'object', 'refreshed on day 29: still alive on day 58');
      assert.equal(await at(89), 'expired', 'unused from day 58 to day 89');
      assert.equal(await at(89), 'unknown', 'and gone');
      assert.equal(await store.tokens.authenticate('pmf_not-a-token', POLICY), 'unknown');
    } finally {
      await close();
    }
  });

  test(`${kind}: a user holds at most perUser tokens; the least recently used go first`, async () => {
    const { store, close } = await open();
    try {
      const { userId } = await store.addUser('bob', POLICY);
      const issued = [await store.tokens.issue(userId, 'webmail', POLICY, T0)];
      for (let i = 1; i <= 5; i++) {
        // the first token is in use all along
        assert.equal(typeof (await store.tokens.authenticate(issued[0], POLICY, T0 + i * DAY)), 'object');
        issued.push(await store.tokens.issue(userId, 'webmail', POLICY, T0 + i * DAY + 1));
      }
      const live = await store.tokens.list(userId, POLICY, T0 + 6 * DAY);
      assert.equal(live.length, POLICY.perUser);
      const alive = await Promise.all(
        issued.map(async (t) => typeof (await store.tokens.authenticate(t, POLICY, T0 + 6 * DAY))),
      );
      assert.deepEqual(alive, ['object', 'string', 'string', 'string', 'object', 'object']);
    } finally {
      await close();
    }
  });

  test(`${kind}: tokens are listed and revoked by id, only the user's own; a deleted user's tokens stop working`, async () => {
    const { store, deleteUser, close } = await open();
    try {
      const carol = await store.addUser('carol', POLICY);
      const dave = await store.addUser('dave', POLICY);
      const second = await store.tokens.issue(carol.userId, 'demo', POLICY);
      const list = await store.tokens.list(carol.userId, POLICY);
      assert.deepEqual(list.map((t) => t.kind).sort(), ['cli', 'demo']);
      const id = list.find((t) => t.kind === 'demo')!.id;
      assert.equal(id, createHash('sha256').update(second).digest('hex').slice(0, 16), 'the id names the token');
      assert.equal(await store.tokens.revoke(dave.userId, id), false, "not someone else's");
      assert.equal(await store.tokens.revoke(carol.userId, id), true);
      assert.equal(await store.authenticate(second), undefined);
      assert.equal(await store.authenticate(carol.token), carol.userId);
      assert.equal(await store.tokens.revokeAll(carol.userId), 1);
      assert.equal(await store.authenticate(carol.token), undefined);
      await deleteUser(dave.userId);
      assert.equal(await store.authenticate(dave.token), undefined, 'gone with the user');
    } finally {
      await close();
    }
  });
}

tokenSuite('sqlite', async () => {
  const file = path.join(tempDir('pmf-tokens-'), 'store.db');
  const store = openSqliteStore(file);
  return {
    store,
    async deleteUser(id) {
      const db = new Database(file);
      db.pragma('foreign_keys = ON');
      db.prepare('DELETE FROM users WHERE id = ?').run(id);
      db.close();
    },
    close: () => store.close(),
  };
});

describe('postgres', { skip: postgresMissing() }, () => {
  const cluster = suitePostgres();
  tokenSuite('postgres', async () => {
    const url = await cluster.database();
    const store = await openPostgresStore(url);
    return {
      store,
      async deleteUser(id) {
        const db = new pg.Pool({ connectionString: url, max: 1 });
        db.on('error', () => undefined); // the server stopping at the end
        await db.query('DELETE FROM users WHERE id = $1', [id]);
        await db.end();
      },
      close: () => store.close(),
    };
  });
});

describe('a running server', () => {
  const SECRET = 'pmfwebmail_tokens-test';
  let h: Harness;
  before(async () => {
    h = await startHarness(
      { tokensPerUser: 5, hellosPerMinute: 1000 },
      { webmailSecretSha256: [createHash('sha256').update(SECRET).digest('hex')] },
    );
  });
  after(() => h.close());

  const hello = async (token: string) => {
    const c = await TestClient.connect(h.server.wsUrl);
    try {
      return await c.request('hello', 1, { token, modelId: 'spam', modelVersion: 2, clientNonce: NONCE, keyEpoch: 0 });
    } finally {
      c.close();
    }
  };
  const tokens = (token: string | undefined, method = 'GET', id = '') =>
    fetch(`${h.server.httpUrl}/tokens${id && `/${id}`}`, {
      method,
      headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    });

  test('an expired token is refused at hello, saying it expired', async () => {
    const { userId } = await h.store.addUser('erin');
    const old = await h.store.tokens.issue(userId, 'cli', { lifetimeMs: 90 * DAY, perUser: 5 }, Date.now() - 91 * DAY);
    const r = await hello(old);
    assert.equal(r.name, 'error');
    assert.deepEqual([r.code, /expired/.test(r.message)], ['unauthenticated', true]);
  });

  test('a user lists their tokens and revokes one with another; the revoked one no longer opens a session', async () => {
    const { userId, token } = await h.store.addUser('frank');
    const laptop = await h.store.issueToken(userId, 'cli');
    assert.equal((await hello(laptop)).name, 'welcome');
    assert.equal((await tokens(undefined)).status, 401);
    assert.equal((await tokens('pmf_nonsense')).status, 401);
    const listed = (await (await tokens(token)).json()) as { tokens: { id: string; current: boolean }[] };
    assert.equal(listed.tokens.length, 2);
    const other = listed.tokens.find((t) => !t.current)!;
    assert.equal((await tokens(token, 'DELETE', other.id)).status, 204);
    assert.equal((await tokens(token, 'DELETE', other.id)).status, 404);
    const r = await hello(laptop);
    assert.deepEqual([r.name, r.name === 'error' && r.code], ['error', 'unauthenticated']);
    const grace = await h.store.addUser('grace');
    assert.equal((await tokens(grace.token, 'DELETE', listed.tokens.find((t) => t.current)!.id)).status, 404);
    assert.equal((await tokens(token, 'POST')).status, 405);
    assert.deepEqual(await (await tokens(token, 'DELETE')).json(), { revoked: 1 });
    assert.equal((await tokens(token)).status, 401, 'every token gone, this one too');
  });

  test('a webmail minting tokens 90 times a minute leaves at most tokensPerUser alive', async () => {
    const { userId } = await h.store.addUser('heidi');
    const minted: string[] = [];
    for (let i = 0; i < 90; i++) {
      const r = await fetch(`${h.server.httpUrl}/webmail/token`, {
        method: 'POST',
        headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
        body: JSON.stringify({ user: 'heidi' }),
      });
      assert.equal(r.status, 200);
      minted.push(((await r.json()) as { token: string }).token);
    }
    const live = await h.store.tokens.list(userId, { lifetimeMs: 90 * DAY });
    assert.equal(live.length, 5);
    assert.ok(live.every((t) => t.kind === 'webmail'));
    assert.equal(await h.store.authenticate(minted.at(-1)!), userId, 'the newest works');
    assert.equal(await h.store.authenticate(minted[0]), undefined, 'the first was revoked');
  });
});

test('the CLI lists a user’s tokens and revokes one by id, or all', async (t) => {
  const dataDir = path.join(tempDir('pmf-tokens-cli-'), 'data');
  process.env.PMF_DATA_DIR = dataDir;
  const out: string[] = [];
  t.mock.method(console, 'log', (...a: unknown[]) => out.push(a.join(' ')));
  assert.equal(await main(['add-user', 'ivan']), 0);
  assert.equal(await main(['issue-token', 'ivan']), 0);
  const [first, second] = out.splice(0);
  assert.equal(await main(['tokens', 'ivan']), 0);
  const ids = out.splice(0).map((l) => l.split(/\s+/)[0]);
  assert.equal(ids.length, 2);
  assert.equal(await main(['revoke-token', 'ivan', ids[0]]), 0);
  await assert.rejects(main(['revoke-token', 'ivan', ids[0]]), /has no token/);
  const store = await openStore({ dataDir });
  try {
    const alive = [await store.authenticate(first), await store.authenticate(second)].filter((x) => x !== undefined);
    assert.equal(alive.length, 1);
    assert.equal(await main(['revoke-token', 'ivan', 'all']), 0);
    assert.equal(await store.authenticate(first), undefined);
    assert.equal(await store.authenticate(second), undefined);
  } finally {
    await store.close();
    delete process.env.PMF_DATA_DIR;
  }
});
