import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { Store } from '../src/store.js';

const RAW =
  'From: Alice <a@x.org>\r\nSubject: hello\r\n  world\r\nDate: Mon, 1 Jan 2024 00:00:00 +0000\r\n\r\n-----BEGIN PGP MESSAGE-----\r\n...';

test('tokens authenticate their user and are stored only as hashes', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-store-'));
  const file = path.join(dir, 'store.db');
  const store = new Store(file);
  const alice = store.addUser('alice');
  const bob = store.addUser('bob');
  assert.equal(store.authenticate(alice.token), alice.userId);
  assert.equal(store.authenticate(bob.token), bob.userId);
  assert.equal(store.authenticate(alice.token + 'x'), undefined);
  assert.equal(store.authenticate(''), undefined);
  assert.throws(() => store.addUser('alice'), /already exists/);
  assert.throws(() => store.addUser('bad name'), /must match/);
  store.revokeToken(bob.token);
  assert.equal(store.authenticate(bob.token), undefined);
  store.close();
  const bytes = fs.readFileSync(file);
  assert.equal(bytes.includes(Buffer.from(alice.token)), false, 'plaintext token found in the database file');
  fs.rmSync(dir, { recursive: true });
});

test('issued tokens are fresh, prefixed and safe to pass on a command line', () => {
  const store = new Store(':memory:');
  const { userId } = store.addUser('carol');
  const tokens = Array.from({ length: 200 }, () => store.issueToken(userId));
  assert.equal(new Set(tokens).size, tokens.length);
  for (const t of tokens) {
    // 32 random bytes in base64url behind the prefix; a leading "-" would be
    // taken for an option by the CLIs (it happened: ~1 in 64 tokens).
    assert.match(t, /^pmf_[A-Za-z0-9_-]{43}$/);
    assert.equal(store.authenticate(t), userId);
  }
  store.close();
});

test('a delivered message is classified at most once per user; unknown and foreign ids are refused', () => {
  const store = new Store(':memory:');
  const a = store.addUser('a').userId;
  const b = store.addUser('b').userId;
  store.deliver(a, 'm1', RAW);
  assert.equal(store.claim(a, 'm1'), 'claimed');
  assert.equal(store.claim(a, 'm1'), 'already_classified');
  assert.equal(store.claim(b, 'm1'), 'unknown_message', 'foreign id');
  assert.equal(store.claim(a, 'nope'), 'unknown_message');
  assert.equal(store.isClassified(a, 'm1'), true);
  // a claim released before any answer left the server can be retried once more
  store.deliver(a, 'm2', RAW);
  assert.equal(store.claim(a, 'm2'), 'claimed');
  store.releaseClaim(a, 'm2');
  assert.equal(store.claim(a, 'm2'), 'claimed');
  assert.equal(store.claim(a, 'm2'), 'already_classified');
  // the same id delivered to b is b's own message
  store.deliver(b, 'm1', RAW);
  assert.equal(store.claim(b, 'm1'), 'claimed');
  assert.throws(() => store.deliver(a, 'm1', RAW), /already delivered/);
  assert.throws(() => store.deliver(999, 'x', RAW), /does not exist/);
  assert.throws(() => store.deliver(a, 'x'.repeat(257), RAW), /message id/);
});

test('the delivered-message registry keeps the raw MIME and its outer headers', () => {
  const store = new Store(':memory:');
  const a = store.addUser('a').userId;
  store.deliver(a, 'm1', RAW);
  assert.deepEqual(store.listMessages(a), [
    {
      id: 'm1',
      from: 'Alice <a@x.org>',
      subject: 'hello world',
      date: 'Mon, 1 Jan 2024 00:00:00 +0000',
      folder: 'inbox',
    },
  ]);
  assert.equal(store.moveMessage(a, 'm1', 'junk'), true);
  assert.deepEqual(store.listMessages(a, 'inbox'), []);
  assert.deepEqual(
    store.listMessages(a, 'junk').map((m) => m.id),
    ['m1'],
  );
  assert.equal(store.moveMessage(a, 'nope', 'junk'), false);
  assert.equal(store.getMessage(a, 'm1')?.raw, RAW);
  assert.equal(store.getMessage(a, 'm2'), undefined);
  assert.deepEqual(store.listMessages(store.addUser('c').userId), []);
});

test('the rate limit counts per user and per minute window', () => {
  const store = new Store(':memory:');
  const a = store.addUser('a').userId;
  const b = store.addUser('b').userId;
  const t0 = 1_700_000_040_000;
  assert.deepEqual(
    [1, 2, 3, 4].map(() => store.takeRate(a, 3, t0)),
    [true, true, true, false],
  );
  assert.equal(store.takeRate(b, 3, t0), true, 'other users are unaffected');
  assert.equal(store.takeRate(a, 3, t0 + 60_000), true, 'a new window starts fresh');
});

test('migrations run once and a newer schema is refused', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-store-'));
  const file = path.join(dir, 's.db');
  const s1 = new Store(file);
  const v = s1.schemaVersion;
  assert.ok(v >= 1);
  s1.addUser('kept');
  s1.close();
  const s2 = new Store(file);
  assert.equal(s2.schemaVersion, v);
  assert.notEqual(s2.userId('kept'), undefined);
  s2.close();
  const db = new Database(file);
  db.pragma(`user_version = ${v + 1}`);
  db.close();
  assert.throws(() => new Store(file), /newer than this server/);
  fs.rmSync(dir, { recursive: true });
});
