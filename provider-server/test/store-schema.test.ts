// The store's schema: both dialects' DDL from one definition, the same
// tables, columns, keys and indexes at the end on SQLite and on a real
// PostgreSQL 15, and the migration of stores written by earlier releases
// with their rows (a newer schema refused).
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { Store } from '../src/store.js';
import { openPostgresStore, POSTGRES_SCHEMA_VERSION } from '../src/store-postgres.js';
import { POSTGRES_FIRST, postgresSteps, sqliteSteps, WORDS } from '../src/store-schema.js';
import { migrateSqlite, openSqliteStore, SQLITE_SCHEMA_VERSION } from '../src/store-sqlite.js';
import { postgresMissing } from './postgres.js';
import { suitePostgres } from './postgres-suite.js';
import {
  assertSalted,
  assertUpgrades,
  migratePool,
  RAW,
  REQ_A,
  tmp,
  tokenNamed,
  tokenSha,
  type RawRun,
} from './store-fixtures.js';

const missing = postgresMissing();
describe('postgres', { skip: missing }, () => {
  const cluster = suitePostgres();

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

    const url = await cluster.database();
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
    const url = await cluster.database();
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
      const url = await cluster.database();
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
