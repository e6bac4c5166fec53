// Backup and restore (src/backup.ts) through the CLI, as an operator runs
// them: a backup taken while the store is being written (the writes go on
// unhindered, the copy is one consistent state), restored as a new data
// directory that opens with the same users, messages, claims and key files;
// a restore never overwrites a data directory or a store and refuses a
// damaged copy; on PostgreSQL the dump goes into an empty database only.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, test } from 'node:test';
import Database from 'better-sqlite3';
import { DeliveryJournal } from '../src/lmtp/journal.js';
import type { Store } from '../src/store.js';
import { openPostgresStore } from '../src/store-postgres.js';
import { openSqliteStore } from '../src/store-sqlite.js';
import { tempDir } from '../../scripts/test/temp-dir.js';
import { postgresMissing } from './postgres.js';
import { suitePostgres } from './postgres-suite.js';

const CLI = 'provider-server/src/cli.ts';
const RAW = 'From: a@x.org\r\nSubject: s\r\n\r\nbody';

/** Runs the CLI with a configuration file naming `dataDir` (and `store`); resolves with its exit code and output. */
function cli(dir: string, args: string[], config: { dataDir: string; store?: string }) {
  const file = path.join(dir, `config-${Math.random().toString(36).slice(2)}.json`);
  fs.writeFileSync(file, JSON.stringify(config));
  const child = spawn(process.execPath, ['--import', 'tsx', CLI, ...args, '--config', file], {
    env: { PATH: process.env.PATH },
  });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  return new Promise<{ code: number | null; out: string }>((resolve) =>
    child.on('close', (code) => resolve({ code, out })),
  );
}

/** A data directory as a provider leaves it: key files (0600), packages, the package log, the LMTP journal. */
function provisionFiles(dataDir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>([
    ['models/spam/v1.key', Buffer.from('secret model key bytes')],
    ['models/spam/v1.pmf', Buffer.alloc(4096, 7)],
    ['models/spam/versions.json', Buffer.from('[{"version":1}]')],
    ['package-log.jsonl', Buffer.from('{"modelId":"spam","version":1}\n')],
    ['package-log.key', Buffer.from('secret log key')],
    ['blocklists/phish/key', Buffer.from('secret oprf key')],
  ]);
  for (const [f, bytes] of files) {
    fs.mkdirSync(path.dirname(path.join(dataDir, f)), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(dataDir, f), bytes, { mode: /key$/.test(f) ? 0o600 : 0o644 });
  }
  const journal = new DeliveryJournal(path.join(dataDir, 'lmtp-journal.db'));
  journal.begin(Buffer.alloc(32, 1));
  journal.close();
  return files;
}

/** What a store holds for user `name`: whether `token` authenticates it, its messages, its claims. */
async function contents(store: Store, name: string, token: string) {
  const id = await store.userId(name);
  return {
    authenticates: id !== undefined && (await store.authenticate(token)) === id,
    messages: id === undefined ? [] : (await store.listMessages(id)).map((m) => m.id),
    classified: id !== undefined && (await store.isClassified(id, 'm0')),
  };
}

test('a backup taken while the store is written restores as a data directory with the same state', async () => {
  const dir = tempDir('pmf-backup-');
  const dataDir = path.join(dir, 'data');
  const files = provisionFiles(dataDir);
  const store = openSqliteStore(path.join(dataDir, 'store.db'));
  const { userId, token } = await store.addUser('alice');
  await store.deliver(userId, 'm0', RAW);
  const c = (await store.claim(userId, 'm0', 'spam', Buffer.alloc(32))) as { attempt: Buffer };
  await store.recordAnswer(userId, 'm0', 'spam', c.attempt, Buffer.from('gc'));
  // A server at work: deliveries one after another until the backup is done.
  let writing = true;
  let written = 1;
  const writer = (async () => {
    while (writing) await store.deliver(userId, `m${written++}`, RAW);
  })();
  const taken = await cli(dir, ['backup', path.join(dir, 'backup')], { dataDir });
  writing = false;
  await writer; // no write failed or waited for the backup
  assert.equal(taken.code, 0, taken.out);
  assert.match(taken.out, /backed up .* 6 files, store\.db and lmtp-journal\.db/);
  assert.ok(written > 5, `${written} deliveries while the backup ran`);
  await store.close();
  assert.equal(fs.statSync(path.join(dir, 'backup')).mode & 0o777, 0o700);

  const restoredDir = path.join(dir, 'restored');
  const restored = await cli(dir, ['restore', path.join(dir, 'backup')], { dataDir: restoredDir });
  assert.equal(restored.code, 0, restored.out);
  for (const [f, bytes] of files) {
    assert.deepEqual(fs.readFileSync(path.join(restoredDir, f)), bytes, f);
    assert.equal(fs.statSync(path.join(restoredDir, f)).mode & 0o777, /key$/.test(f) ? 0o600 : 0o644, f);
  }
  const again = openSqliteStore(path.join(restoredDir, 'store.db'));
  try {
    const got = await contents(again, 'alice', token);
    assert.equal(got.authenticates, true);
    assert.equal(got.classified, true);
    // A prefix of the deliveries: the state at one moment of the backup, m0..m(k-1).
    const k = got.messages.length;
    assert.ok(k >= 1 && k <= written, `${k} of ${written}`);
    assert.deepEqual([...got.messages].sort(), Array.from({ length: k }, (_, i) => `m${i}`).sort());
  } finally {
    await again.close();
  }
  const journal = new Database(path.join(restoredDir, 'lmtp-journal.db'), { readonly: true });
  assert.equal((journal.prepare('SELECT COUNT(*) AS n FROM deliveries').get() as { n: number }).n, 1);
  journal.close();
});

test('a restore overwrites nothing and refuses a damaged copy, leaving no data directory', async () => {
  const dir = tempDir('pmf-restore-');
  const dataDir = path.join(dir, 'data');
  provisionFiles(dataDir);
  const store = openSqliteStore(path.join(dataDir, 'store.db'));
  await store.addUser('bob');
  await store.close();
  assert.equal((await cli(dir, ['backup', path.join(dir, 'b')], { dataDir })).code, 0);
  const twice = await cli(dir, ['backup', path.join(dir, 'b')], { dataDir });
  assert.notEqual(twice.code, 0, 'a backup is never written over another');

  const over = await cli(dir, ['restore', path.join(dir, 'b')], { dataDir });
  assert.notEqual(over.code, 0);
  assert.match(over.out, /exists; stop every instance and move it aside first/);

  // A page of the copied store overwritten: refused before anything is put in place.
  const copy = path.join(dir, 'b', 'store.db');
  const bytes = fs.readFileSync(copy);
  bytes.fill(0xa5, 4096 * 2, 4096 * 3);
  fs.writeFileSync(copy, bytes);
  const target = path.join(dir, 'fresh');
  const damaged = await cli(dir, ['restore', path.join(dir, 'b')], { dataDir: target });
  assert.notEqual(damaged.code, 0);
  assert.match(damaged.out, /damaged|malformed/);
  assert.equal(fs.existsSync(target), false);
});

describe('on PostgreSQL', { skip: postgresMissing() }, () => {
  const postgres = suitePostgres();

  test('pg_dump while the store is written, pg_restore into an empty database only', async () => {
    const dir = tempDir('pmf-pgbackup-');
    const dataDir = path.join(dir, 'data');
    const files = provisionFiles(dataDir);
    const url = await postgres.database();
    const store = await openPostgresStore(url);
    const { userId, token } = await store.addUser('carol');
    await store.deliver(userId, 'm0', RAW);
    await store
      .claim(userId, 'm0', 'spam', Buffer.alloc(32))
      .then((c) => store.recordAnswer(userId, 'm0', 'spam', (c as { attempt: Buffer }).attempt, null));
    let writing = true;
    let written = 1;
    const writer = (async () => {
      while (writing) await store.deliver(userId, `m${written++}`, RAW);
    })();
    const taken = await cli(dir, ['backup', path.join(dir, 'backup')], { dataDir, store: url });
    writing = false;
    await writer;
    assert.equal(taken.code, 0, taken.out);
    assert.match(taken.out, /lmtp-journal\.db and store\.pgdump/);

    // Into a database that already holds a store: refused, and nothing is put in place.
    const refused = await cli(dir, ['restore', path.join(dir, 'backup')], {
      dataDir: path.join(dir, 'r1'),
      store: url,
    });
    assert.notEqual(refused.code, 0);
    assert.match(refused.out, /already holds a provider store/);
    assert.equal(fs.existsSync(path.join(dir, 'r1')), false);
    await store.close();

    const empty = await postgres.database();
    const restoredDir = path.join(dir, 'r2');
    const restored = await cli(dir, ['restore', path.join(dir, 'backup')], { dataDir: restoredDir, store: empty });
    assert.equal(restored.code, 0, restored.out);
    for (const [f, bytes] of files) assert.deepEqual(fs.readFileSync(path.join(restoredDir, f)), bytes, f);
    const again = await openPostgresStore(empty);
    try {
      const got = await contents(again, 'carol', token);
      assert.equal(got.authenticates, true);
      assert.equal(got.classified, true);
      assert.ok(got.messages.length >= 1 && got.messages.length <= written);
      // The restored store works: its sequences and the group commit's go on.
      const { userId: dave } = await again.addUser('dave');
      await again.deliver(dave, 'n1', RAW);
    } finally {
      await again.close();
    }
  });
});
