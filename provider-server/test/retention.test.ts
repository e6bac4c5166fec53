// Nothing grows per delivered byte: with Dovecot holding the mail, the LMTP
// stage registers each delivery's id and size, not the message. One 1 MiB
// message to 20 users (the old registry kept 20 copies) must leave the store
// within a few pages of where it was, on SQLite and on PostgreSQL.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { LMTP_DEFAULTS } from '../src/lmtp/config.js';
import { DeliveryJournal } from '../src/lmtp/journal.js';
import { lmtpSend } from '../src/lmtp/lmtp-client.js';
import { storeRegistry } from '../src/lmtp/registry.js';
import { startLmtpStage } from '../src/lmtp/stage.js';
import type { Store } from '../src/store.js';
import { openPostgresStore } from '../src/store-postgres.js';
import { openSqliteStore } from '../src/store-sqlite.js';
import { tempDir } from '../../scripts/test/temp-dir.js';
import { startFakeMailStore, type FakeMailStore } from './fake-mail-store.js';
import { postgresMissing } from './postgres.js';
import { suitePostgres } from './postgres-suite.js';

const USERS = 20;
const MESSAGE_BYTES = 1024 * 1024;
/** Rows, index entries and their pages for 20 deliveries; a kept copy would be 20 MiB. */
const MAX_GROWTH = 256 * 1024;

let fake: FakeMailStore;
before(async () => {
  fake = await startFakeMailStore();
});
after(() => fake?.close());

/** An OpenPGP-armored message of about MESSAGE_BYTES (random: nothing compresses it). */
function encryptedMail(): Buffer {
  const armor = randomBytes((MESSAGE_BYTES * 3) / 4)
    .toString('base64')
    .replace(/.{64}/g, '$&\r\n');
  return Buffer.from(
    `From: bob@example.org\r\nSubject: the quarterly figures\r\n\r\n-----BEGIN PGP MESSAGE-----\r\n\r\n${armor}\r\n-----END PGP MESSAGE-----\r\n`,
  );
}

/** Delivers one message to USERS users of `store` through the LMTP stage: the store (`size`) grows by little. */
async function deliverToAll(store: Store, dir: string, size: () => Promise<number>): Promise<void> {
  const names = Array.from({ length: USERS }, (_, i) => `user${i}`);
  for (const n of names) await store.addUser(n);
  const journal = new DeliveryJournal(path.join(dir, 'journal.db'));
  const stage = await startLmtpStage({
    config: { ...LMTP_DEFAULTS, port: 0, relay: { host: '127.0.0.1', port: fake.port, timeoutMs: 30_000 } },
    journal,
    registry: storeRegistry(store),
  });
  try {
    const before = await size();
    const r = await lmtpSend(
      { host: '127.0.0.1', port: stage.port, timeoutMs: 60_000 },
      { from: 'bob@example.org', to: names.map((n) => `${n}@example.org`), data: encryptedMail() },
    );
    assert.deepEqual(
      r.data.map((d) => d?.code),
      names.map(() => 250),
    );
    const grew = (await size()) - before;
    assert.ok(grew < MAX_GROWTH, `the store grew by ${grew} bytes`);
    for (const n of names) {
      const [m] = await store.listMessages((await store.userId(n))!);
      assert.ok((await store.getMessage((await store.userId(n))!, m.id))!.bytes > MESSAGE_BYTES, 'its size is kept');
    }
  } finally {
    await stage.close();
    journal.close();
  }
}

test('sqlite: one 1 MiB message to 20 users grows store.db (and its WAL) by a few pages, not by the message', async () => {
  const dir = tempDir('pmf-retention-');
  const file = path.join(dir, 'store.db');
  const store = openSqliteStore(file);
  const bytes = (f: string) => (fs.existsSync(f) ? fs.statSync(f).size : 0);
  try {
    await deliverToAll(store, dir, async () => bytes(file) + bytes(`${file}-wal`));
  } finally {
    await store.close();
  }
});

describe('postgres', { skip: postgresMissing() }, () => {
  const cluster = suitePostgres();

  test('postgres: one 1 MiB message to 20 users grows the database by a few pages, not by the message', async () => {
    const url = await cluster.database();
    const store = await openPostgresStore(url);
    const db = new pg.Pool({ connectionString: url, max: 1 });
    db.on('error', () => undefined); // the server stopping at the end
    try {
      const size = async () =>
        Number((await db.query('SELECT pg_database_size(current_database()) AS n')).rows[0].n as string);
      await deliverToAll(store, tempDir('pmf-retention-'), size);
    } finally {
      await db.end();
      await store.close();
    }
  });
});
