// The remote index's endpoints against hostile and careless clients
// (docs/remote-search.md#provider-store), on both stores: the embedded
// SQLite file and a real PostgreSQL 15, where two provider instances share
// one database. What a client can do by choosing its bytes: no token, too
// many requests, malformed or oversized bodies, a stale version, a message
// indexed already, a full quota, another account's addresses and tags, a
// crash between commit and materialization. (Here, not in provider-server/test:
// valid requests are built with the client's code, which the provider may not import.)
import assert from 'node:assert/strict';
import { after, before, describe, mock, test } from 'node:test';
import Database from 'better-sqlite3';
import path from 'node:path';
import postgresDriver from 'pg';
import { makeParty } from '../../../extension/test/mail-fixtures.js';
import { RemoteIndexApi, RemoteIndexError } from '../../core/remote-index/api.js';
import { deriveKeys } from '../../core/remote-index/keys.js';
import { documentKeywords } from '../../core/remote-index/keywords.js';
import { RemoteIndex } from '../../core/remote-index/remote-index.js';
import { Counters } from '../../core/remote-index/state.js';
import { buildUpdate, KeywordKeys, type IndexDoc } from '../../core/remote-index/update.js';
import { decodeUpdate, encodeUpdate, REQUEST_LIMITS, TAG_BYTES } from '../../../protocol/remote-search.js';
import { startIndexServer, type IndexServer } from './fixture.js';
import { remoteIndexLimits } from '../../../provider-server/src/remote-index/limits.js';
import { RemoteIndexStore } from '../../../provider-server/src/remote-index/store.js';
import type { SqlDriver, Store } from '../../../provider-server/src/store.js';
import { openPostgresStore } from '../../../provider-server/src/store-postgres.js';
import { openSqliteStore } from '../../../provider-server/src/store-sqlite.js';
import { tempDir } from '../../../scripts/test/temp-dir.js';
import { postgresMissing, startPostgres, type TestPostgres } from '../../../provider-server/test/postgres.js';

const mail = (i: number, body = `word${i % 5} shared`): IndexDoc => ({
  deliveryId: `id-${i}`,
  date: 1_760_000_000_000 + i,
  url: '',
  subject: `s${i}`,
  from: '',
  keywords: documentKeywords({ subject: '', from: '', body }),
});

/** A client holding every counter, building updates by hand. */
async function builder(seed: number) {
  const keys = await deriveKeys(new Uint8Array(32).fill(seed));
  const counters = new Counters();
  await counters.apply(keys, { version: 0, snapshotVersion: 0, buckets: [], deltas: [] });
  const kw = new KeywordKeys(keys);
  return { keys, counters, build: (docs: IndexDoc[]) => buildUpdate(keys, kw, counters, docs) };
}

function suite(kind: string, open: () => Promise<{ servers: IndexServer[]; close(): Promise<void> }>): void {
  describe(kind, () => {
    let servers: IndexServer[];
    let close: () => Promise<void>;
    let server: IndexServer;
    let alice: { userId: number; token: string };
    let bob: { userId: number; token: string };
    const post = (path: string, body: Uint8Array | string, token = alice.token, headers: Record<string, string> = {}) =>
      fetch(`${server.url}/remote-index${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, ...headers },
        body,
      });
    const status = async (
      r: Promise<Response>,
    ): Promise<[number, { error?: string; version?: number; duplicates?: string[] }]> => {
      const res = await r;
      const text = await res.text();
      return [res.status, text.startsWith('{') ? JSON.parse(text) : {}];
    };

    before(async () => {
      ({ servers, close } = await open());
      server = servers[0];
      alice = await server.user('alice');
      bob = await server.user('bob');
    });
    after(() => close());

    test('no token, a wrong one, or too many requests: refused before anything is read', async () => {
      assert.equal((await fetch(`${server.url}/remote-index/state`)).status, 401);
      assert.equal((await post('/search', new Uint8Array(16), 'pmf_not-a-token')).status, 401);
      const limited = await startIndexServer({ store: server.store, limits: { requestsPerMinute: 3 } });
      const { token } = await limited.user('hasty');
      const codes: number[] = [];
      for (let i = 0; i < 5; i++)
        codes.push(
          (await fetch(`${limited.url}/remote-index/state`, { headers: { authorization: `Bearer ${token}` } })).status,
        );
      assert.deepEqual(codes, [200, 200, 200, 429, 429]);
      // A large search counts as several requests: 4,096 addresses a unit.
      const { token: big } = await limited.user('thorough');
      const search = (n: number) =>
        fetch(`${limited.url}/remote-index/search`, {
          method: 'POST',
          headers: { authorization: `Bearer ${big}` },
          body: new Uint8Array(16 * n),
        }).then((r) => r.status);
      assert.equal(await search(4096), 200, '1 + 1 units');
      assert.equal(await search(4096), 429, '2 + 2 units: past 3');
      await limited.close();
    });

    test('a write that meets a 429 or a dropped connection goes on; a search fails at once', async () => {
      const { token } = await server.user('patient');
      let refuse = 0;
      const busy: typeof fetch = async (input, init) => {
        const { pathname } = new URL(String(input));
        if ((pathname.endsWith('/update') || pathname.endsWith('/search')) && refuse-- > 0)
          return new Response(JSON.stringify({ error: 'rate_limited', message: 'slow down' }), {
            status: 429,
            headers: { 'retry-after': '1' },
          });
        return fetch(input, init);
      };
      const idx = new RemoteIndex(
        new RemoteIndexApi({ baseUrl: server.url, token, fetch: busy }),
        await deriveKeys(new Uint8Array(32).fill(4)),
      );
      refuse = 1;
      const t0 = Date.now();
      assert.deepEqual(await idx.add([mail(1)]), { added: 1, skipped: 0 });
      assert.ok(Date.now() - t0 >= 1000, 'waited the second it was told');
      refuse = 1;
      await assert.rejects(idx.search('word1'), (e: RemoteIndexError) => e.code === 'rate_limited');
      // The connection drops under a write: sent again, once its answer is lost too.
      let drop = 2;
      const flaky = new RemoteIndex(
        new RemoteIndexApi({
          baseUrl: server.url,
          token,
          fetch: async (input, init) => {
            const update = new URL(String(input)).pathname.endsWith('/update');
            if (update && drop === 2) {
              drop--;
              throw new TypeError('fetch failed', { cause: { code: 'ECONNRESET' } });
            }
            const res = await fetch(input, init);
            if (update && drop-- === 1) throw new TypeError('fetch failed', { cause: { code: 'UND_ERR_SOCKET' } });
            return res;
          },
        }),
        await deriveKeys(new Uint8Array(32).fill(4)),
      );
      // The answer of the commit was lost: the device finds its messages indexed (by itself) and counts them skipped.
      assert.deepEqual(await flaky.add([mail(2), mail(3)]), { added: 0, skipped: 2 });
      assert.deepEqual(await flaky.has(['id-2', 'id-3']), [true, true]);
      assert.deepEqual(
        (await flaky.search('word2', 10)).hits.map((h) => h.deliveryId),
        ['id-2'],
      );
    });

    test('malformed and oversized bodies get 400 / 413 and change nothing', async () => {
      const b = await builder(1);
      const good = encodeUpdate((await b.build([mail(1)])).body);
      const bad: [string, Uint8Array | string, number][] = [
        ['/update', good.subarray(0, good.length - 1), 400],
        ['/update', Uint8Array.from([...good.subarray(0, 6 + 24), 200, ...good.subarray(6 + 25)]), 400], // unknown size class
        ['/update', Uint8Array.from([...good, 0]), 400],
        ['/update', Uint8Array.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0]), 400], // no documents
        ['/search', new Uint8Array(15), 400],
        ['/search', new Uint8Array(0), 400],
        ['/records', new Uint8Array(101 * TAG_BYTES), 400],
        ['/has', new Uint8Array(TAG_BYTES + 1), 400],
        // A removal undoes at most one update's worth of messages: no request deletes more rows than one inserts.
        ['/delete', new Uint8Array((REQUEST_LIMITS.docsPerUpdate + 1) * TAG_BYTES), 400],
        ['/compact', new Uint8Array(8), 400],
      ];
      for (const [path, body, code] of bad)
        assert.equal((await post(path, body)).status, code, `${path} ${body.length} bytes`);
      // Declared too large: refused at once; streamed too large: refused once it passes the bound.
      assert.equal(
        (
          await post('/search', new Uint8Array(16), alice.token, { 'content-length': String(5 << 20) }).catch(() => ({
            status: 413,
          }))
        ).status,
        413,
      );
      assert.equal((await post('/records', new Uint8Array(5 << 20))).status, 413);
      for (const q of ['since=-1', 'since=x', 'buckets=256', 'buckets=1,1', 'buckets=a'])
        assert.equal(
          (
            await fetch(`${server.url}/remote-index/state?${q}`, {
              headers: { authorization: `Bearer ${alice.token}` },
            })
          ).status,
          400,
          q,
        );
      const [, dup] = await status(post('/update', encodeUpdate((await b.build([mail(2), mail(2)])).body)));
      assert.equal(dup.error, 'bad_request', 'a message twice in one update');
      const rows = await server.store
        .sql()
        .all<{ n: number }>('SELECT COUNT(*) AS n FROM ri_log WHERE user_id = ?', [alice.userId]);
      assert.equal(Number(rows[0].n), 0, 'nothing committed');
    });

    test('a stale version is a conflict; a message indexed already is refused and named', async () => {
      const b = await builder(2);
      const first = await b.build([mail(10), mail(11)]);
      assert.deepEqual((await status(post('/update', encodeUpdate(first.body))))[1], {
        version: 1,
        compact: false,
        collisions: 0,
      });
      b.counters.version = 1;
      const stale = (await b.build([mail(12)])).body;
      const [code, body] = await status(post('/update', encodeUpdate({ ...stale, baseVersion: 0 })));
      assert.deepEqual([code, body.error, body.version], [409, 'conflict', 1]);
      const again = await b.build([mail(13), mail(11)]);
      const [code2, body2] = await status(post('/update', encodeUpdate(again.body)));
      assert.deepEqual([code2, body2.error], [409, 'duplicate']);
      assert.deepEqual(body2.duplicates, [Buffer.from(again.body.docs[1].tag).toString('hex')]);
      const [{ n }] = await server.store
        .sql()
        .all<{ n: number }>('SELECT COUNT(*) AS n FROM ri_docs WHERE user_id = ?', [alice.userId]);
      assert.equal(Number(n), 2);
    });

    test('another account’s addresses, tags and key are out of reach', async () => {
      const api = (token: string) => new RemoteIndexApi({ baseUrl: server.url, token });
      const b = await builder(2);
      const [added] = (await b.build([mail(10)])).body.docs; // the same addresses and tag alice's index holds
      const asBob = api(bob.token);
      const answer = await asBob.search(added.addrs);
      assert.equal(answer.docs.length, 0);
      assert.ok(answer.hits.every((h) => h === 0));
      assert.deepEqual(await asBob.records([added.tag]), [undefined]);
      assert.deepEqual(await asBob.has([added.tag]), [false]);
      assert.equal(await asBob.remove([added.tag]), 0);
      assert.equal(await api(alice.token).putKey(new Uint8Array(10).fill(1)), 'created');
      assert.equal(await asBob.getKey(), undefined);
      assert.equal(await api(alice.token).putKey(new Uint8Array(10).fill(2)), 'exists');
      assert.deepEqual(await api(alice.token).getKey(), new Uint8Array(10).fill(1));
      assert.equal((await api(alice.token).search(added.addrs)).docs.length, 1);
    });

    test('quotas: messages, entries, and updates since the last snapshot', async () => {
      const small = await startIndexServer({
        store: server.store,
        limits: { maxDocs: 3, maxDeltas: 2, compactAfterBytes: 1 << 30 },
      });
      const { token } = await small.user('small');
      const api = new RemoteIndexApi({ baseUrl: small.url, token });
      const b = await builder(3);
      const commit = async (docs: IndexDoc[]) => {
        const built = await b.build(docs);
        try {
          b.counters.version = (await api.update(built.body)).version;
          return 'ok';
        } catch (e) {
          built.rollback();
          return (e as RemoteIndexError).code;
        }
      };
      assert.equal(await commit([mail(1)]), 'ok');
      assert.equal(await commit([mail(2)]), 'ok');
      assert.equal(await commit([mail(3)]), 'compact_first');
      await api.compact({
        baseVersion: b.counters.version,
        buckets: await b.counters.snapshot(b.keys, b.counters.version + 1),
      });
      b.counters.version++;
      assert.equal(await commit([mail(3), mail(4)]), 'quota');
      assert.equal(await commit([mail(3)]), 'ok');
      await small.close();
    });

    test('a crash between a commit and its materialization is finished by the next request', async () => {
      const b = await builder(9);
      const built = await b.build([mail(1, 'pangolin'), mail(2, 'pangolin walrus')]);
      const raw = encodeUpdate(built.body);
      // The process dies right after the log row is committed: no document or entry lands.
      const db = server.store.sql();
      const dying: SqlDriver = {
        dialect: db.dialect,
        all: (sql, p, d) => db.all(sql, p, d),
        run: (sql, p, d) =>
          /^INSERT INTO ri_(docs|entries)/.test(sql) ? Promise.reject(new Error('killed')) : db.run(sql, p, d),
        durable: () => db.durable(),
        violated: (e) => db.violated(e),
        schemaVersion: () => db.schemaVersion(),
        close: () => db.close(),
      };
      await assert.rejects(
        new RemoteIndexStore(() => dying, remoteIndexLimits()).commitUpdate(bob.userId, decodeUpdate(raw), raw),
        /killed/,
      );
      const [{ n }] = await db.all<{ n: number }>('SELECT COUNT(*) AS n FROM ri_docs WHERE user_id = ?', [bob.userId]);
      assert.equal(Number(n), 0);
      const api = new RemoteIndexApi({ baseUrl: server.url, token: bob.token });
      const answer = await api.search(built.body.docs[0].addrs);
      assert.equal(answer.docs.length, 1, 'the next request put the committed update in place');
      assert.deepEqual(await api.has(built.body.docs.map((d) => d.tag)), [true, true]);
      const [{ m }] = await db.all<{ m: number }>('SELECT materialized AS m FROM ri_accounts WHERE user_id = ?', [
        bob.userId,
      ]);
      assert.equal(Number(m), 1);
    });

    test('two provider instances on one store, two devices racing through them', async () => {
      const party = await makeParty('Carol', 'carol@example.org');
      const carol = await server.user('carol');
      const token2 = await server.store.issueToken(carol.userId);
      const [a, b] = await Promise.all(
        [
          [servers[0], carol.token],
          [servers[servers.length - 1], token2],
        ].map(([s, token]) =>
          RemoteIndex.open({
            baseUrl: (s as IndexServer).url,
            token: token as string,
            privateKeys: [party.privateKey],
          }),
        ),
      );
      const mails = Array.from({ length: 120 }, (_, i) => mail(100 + i, `topic${i % 3} n${i}x`));
      await Promise.all([
        (async () => {
          for (let i = 0; i < 80; i += 8) await a.add(mails.slice(i, i + 8));
        })(),
        (async () => {
          for (let i = 40; i < 120; i += 8) await b.add(mails.slice(i, i + 8));
        })(),
      ]);
      for (const dev of [a, b]) {
        const got = await dev.search('topic1', 1000);
        assert.deepEqual(
          got.hits.map((h) => h.deliveryId).sort(),
          mails
            .filter((_, i) => i % 3 === 1)
            .map((m) => m.deliveryId)
            .sort(),
        );
      }
    });

    test('removing a message drops its record and every entry of it, padding too; the quota counts them no more', async () => {
      const dave = await server.user('dave');
      const api = new RemoteIndexApi({ baseUrl: server.url, token: dave.token });
      const b = await builder(4);
      const built = await b.build([mail(1, 'pangolin'), mail(2, 'pangolin walrus')]);
      await api.update(built.body);
      const [gone, kept] = built.body.docs;
      const entries = async () => {
        const [rows] = await server.store
          .sql()
          .all<{ n: number }>('SELECT COUNT(*) AS n FROM ri_entries WHERE user_id = ?', [dave.userId]);
        const [account] = await server.store
          .sql()
          .all<{ n: number }>('SELECT entries AS n FROM ri_accounts WHERE user_id = ?', [dave.userId]);
        return [Number(rows.n), Number(account.n)];
      };
      const padded = (d: typeof gone) => d.addrs.length / 16;
      assert.deepEqual(await entries(), [padded(gone) + padded(kept), padded(gone) + padded(kept)]);
      assert.equal(await api.remove([gone.tag]), 1);
      // Replayed, the removal finds nothing more to remove.
      assert.equal(await api.remove([gone.tag]), 0);
      assert.deepEqual(
        await entries(),
        [padded(kept), padded(kept)],
        'every entry of the message went, and the count with it',
      );
      assert.deepEqual(await api.has([gone.tag, kept.tag]), [false, true]);
      assert.deepEqual(await api.records([gone.tag]), [undefined]);
      assert.equal((await api.search(gone.addrs)).docs.length, 0);
      assert.equal((await api.search(kept.addrs)).docs.length, 1);
    });

    test('a search answers every position as a lookup of its address alone: repeated, unknown, and an entry whose message is gone', async () => {
      const fay = await server.user('fay');
      const api = new RemoteIndexApi({ baseUrl: server.url, token: fay.token });
      const b = await builder(5);
      const built = await b.build([mail(1, 'pangolin'), mail(2, 'pangolin walrus'), mail(3, 'walrus')]);
      await api.update(built.body);
      const [one, two, three] = built.body.docs;
      // A message's entries left behind (as by a materialization that raced its removal).
      const sql = server.store.sql();
      await sql.run('DELETE FROM ri_docs WHERE user_id = ? AND tag = ?', [fay.userId, Buffer.from(three.tag)]);
      const at = (d: typeof one, i: number) => d.addrs.subarray(16 * i, 16 * (i + 1));
      const asked = [
        at(one, 0),
        at(two, 3),
        at(three, 0),
        crypto.getRandomValues(new Uint8Array(16)),
        at(one, 0),
        at(two, 1),
        at(three, 2),
        at(one, 0),
        at(two, 3),
      ];
      // Past the addresses of one statement (256 on SQLite, 4,096 on PostgreSQL): the same again after 4,200 unknown.
      const unknown = Array.from({ length: 4200 }, () => crypto.getRandomValues(new Uint8Array(16)));
      asked.push(...unknown, ...asked.slice());
      const isUnknown = new Set<Uint8Array>(unknown);
      // The reference: each address looked up alone, by its own statement.
      const alone = async (a: Uint8Array) => {
        const [row] = await sql.all<{ tag: Uint8Array; sort: Uint8Array; chk: Uint8Array }>(
          'SELECT d.tag, d.sort, e.chk FROM ri_entries e JOIN ri_docs d ON d.user_id = e.user_id AND d.doc = e.doc WHERE e.user_id = ? AND e.addr = ?',
          [fay.userId, Buffer.from(a)],
        );
        return row
          ? [
              Buffer.from(row.tag).toString('hex'),
              Buffer.from(row.sort).toString('hex'),
              Buffer.from(row.chk).readUInt32BE(0),
            ]
          : null;
      };
      const expected = await Promise.all(asked.map((a) => (isUnknown.has(a) ? null : alone(a))));
      const answer = await api.search(Uint8Array.from(Buffer.concat(asked)));
      const got = Array.from(answer.hits, (h, p) =>
        h === 0
          ? null
          : [
              Buffer.from(answer.docs[h - 1].tag).toString('hex'),
              Buffer.from(answer.docs[h - 1].sort).toString('hex'),
              answer.checks[p],
            ],
      );
      assert.deepEqual(got, expected);
      assert.equal(answer.docs.length, 2, 'each message found once, the gone one not at all');
      // The gone message's entries were dropped as they were found.
      const [left] = await sql.all<{ n: number }>(
        'SELECT COUNT(*) AS n FROM ri_entries WHERE user_id = ? AND addr IN (?, ?)',
        [fay.userId, Buffer.from(at(three, 0)), Buffer.from(at(three, 2))],
      );
      assert.equal(Number(left.n), 0);
    });

    test('deleting the index removes every row of the account and only those', async () => {
      const api = new RemoteIndexApi({ baseUrl: server.url, token: alice.token });
      await api.deleteAll();
      for (const table of ['ri_entries', 'ri_docs', 'ri_log', 'ri_accounts']) {
        const rows = await server.store.sql().all<{ user_id: number }>(`SELECT DISTINCT user_id FROM ${table}`, []);
        assert.ok(!rows.some((r) => Number(r.user_id) === alice.userId), table);
      }
      const others = await server.store.sql().all<{ n: number }>('SELECT COUNT(*) AS n FROM ri_docs', []);
      assert.ok(Number(others[0].n) > 0, 'other accounts keep theirs');
    });

    test('deleting an account deletes its index', async () => {
      const erin = await server.user('erin');
      const api = new RemoteIndexApi({ baseUrl: server.url, token: erin.token });
      await api.putKey(new Uint8Array(10).fill(5));
      await api.update((await (await builder(5)).build([mail(1), mail(2)])).body);
      const rows = async () => {
        let n = 0;
        for (const table of ['ri_entries', 'ri_docs', 'ri_log', 'ri_accounts', 'ri_windows']) {
          const [r] = await server.store
            .sql()
            .all<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table} WHERE user_id = ?`, [erin.userId]);
          n += Number(r.n);
        }
        return n;
      };
      assert.ok((await rows()) > 0);
      assert.equal(await server.store.deleteUser('erin'), erin.userId);
      assert.equal(await rows(), 0);
    });
  });
}

suite('SQLite', async () => {
  const server = await startIndexServer();
  return { servers: [server], close: () => server.close() };
});

/**
 * Every kind of statement of an account's life (update, search, has, remove)
 * at each number of messages given, through the real client and the store.
 */
async function atSizes(store: Store): Promise<{ run(ns: number[]): Promise<void>; close(): Promise<void> }> {
  const server = await startIndexServer({ store });
  const { token } = await server.user('sizes');
  const keys = await deriveKeys(new Uint8Array(32).fill(7));
  const device = new RemoteIndex(new RemoteIndexApi({ baseUrl: server.url, token }), keys);
  let next = 0;
  const run = async (ns: number[]): Promise<void> => {
    for (const n of ns) {
      const docs = Array.from({ length: n }, () => mail(next++));
      await device.add(docs);
      await device.search('shared', 1000);
      await device.has(docs.map((d) => d.deliveryId));
      await device.remove(docs.slice(0, Math.ceil(n / 2)).map((d) => d.deliveryId));
      await device.search('shared', 1000);
    }
  };
  return { run, close: () => server.close() };
}

test('SQLite: every list in a statement has a power-of-two length, so each shape has a few statements', async () => {
  // SQLite keeps each statement it compiled; one per list length grew without bound but for the length cap.
  const texts = new Set<string>();
  const prepare = Database.prototype.prepare;
  const spy = mock.method(Database.prototype, 'prepare', function (this: Database.Database, sql: string) {
    texts.add(sql);
    return prepare.call(this, sql);
  });
  const file = path.join(tempDir('pmf-ri-sizes-'), 'store.db');
  const store = openSqliteStore(file);
  try {
    const sizes = await atSizes(store);
    await sizes.run([1, 2, 3, 5, 8, 13, 21, 34]);
    await sizes.close();
  } finally {
    spy.mock.restore();
    await store.close();
  }
  const lengths = [...texts].flatMap((t) => [
    ...[...t.matchAll(/IN \(((?:\?, )*\?)\)/g)].map((m) => m[1].split(',').length),
    ...(t.startsWith('WITH q(p, a)') ? [t.split('UNION ALL SELECT').length - 1] : []),
    ...(/VALUES \(/.test(t) ? [t.split(/\), \(/).length] : []),
  ]);
  assert.ok(lengths.length > 10, `${lengths.length} lists found`);
  assert.deepEqual(
    lengths.filter((n) => (n & (n - 1)) !== 0),
    [],
  );
});

const missing = postgresMissing();
let pg: TestPostgres | undefined;
describe('PostgreSQL', { skip: missing }, () => {
  before(async () => {
    pg = await startPostgres();
  });
  after(() => pg?.stop());
  test('the statements are the same whatever the number of messages, tags or addresses', async () => {
    // A statement per list length would stay prepared on every connection, one more per new length.
    const store = await openPostgresStore(await pg!.database());
    const texts = new Set<string>();
    const query = postgresDriver.Client.prototype.query;
    const spy = mock.method(postgresDriver.Client.prototype, 'query', function (this: unknown, ...args: unknown[]) {
      texts.add(typeof args[0] === 'string' ? args[0] : (args[0] as { text: string }).text);
      return (query as (...a: unknown[]) => unknown).apply(this, args);
    });
    try {
      const sizes = await atSizes(store);
      await sizes.run([1, 2]);
      const seen = new Set(texts);
      await sizes.run([3, 5, 8, 13]);
      await sizes.close();
      assert.deepEqual(
        [...texts].filter((t) => !seen.has(t)),
        [],
        `${seen.size} statements after two rounds`,
      );
    } finally {
      spy.mock.restore();
      await store.close();
    }
  });

  let stores: Store[] = [];
  suite('two instances', async () => {
    const url = await pg!.database();
    stores = [await openPostgresStore(url), await openPostgresStore(url)];
    const servers = await Promise.all(stores.map((store) => startIndexServer({ store })));
    return {
      servers,
      close: async () => {
        for (const s of servers) await s.close();
        for (const s of stores) await s.close();
      },
    };
  });
});
