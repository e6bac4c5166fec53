// What the provider's store keeps per delivery, for sizing: deliveries as the
// LMTP stage registers them (a provider id and the size; Dovecot holds the
// message), each classified once for spam (claim, request hash; the answer
// recorded, then acknowledged and dropped), spread over 1,000 users. The
// growth of the database over the deliveries, per delivery: times a million
// is the store per million deliveries. SQLite (store.db with its WAL
// checkpointed) and PostgreSQL (pg_database_size after VACUUM), when its
// binaries are here (provider-server/test/postgres.ts).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { Store } from '../../provider-server/src/store.js';
import { openPostgresStore } from '../../provider-server/src/store-postgres.js';
import { openSqliteStore } from '../../provider-server/src/store-sqlite.js';
import { postgresMissing, startPostgres } from '../../provider-server/test/postgres.js';
import { tempDir } from '../../scripts/test/temp-dir.js';
import type { BenchContext } from '../lib.js';

const USERS = 1000;
/** A spam answer as recorded (spam_gc of the default model, limits.ts), dropped once acknowledged. */
const ANSWER = Buffer.alloc(1200, 7);

async function makeUsers(store: Store): Promise<number[]> {
  const users: number[] = [];
  for (let u = 0; u < USERS; u++) users.push((await store.addUser(`user${u}`)).userId);
  return users;
}

/** Delivers and classifies `n` messages, spread over `users`. */
async function deliverAndClassify(store: Store, users: number[], n: number): Promise<void> {
  const one = async (i: number) => {
    const user = users[i % USERS];
    const id = `pmf-${randomBytes(16).toString('hex')}`; // as the LMTP stage assigns them
    const request = Buffer.alloc(32, i & 0xff);
    await store.deliver(user, id, `Subject: ${i}\r\n\r\n${'x'.repeat(4096)}`, { keepBody: false });
    const claim = await store.claim(user, id, 'spam', request);
    if (typeof claim !== 'object') throw new Error(`claim of ${id}: ${claim}`);
    await store.recordAnswer(user, id, 'spam', claim.attempt, ANSWER);
    await store.acknowledge(user, id, 'spam', request);
  };
  const inFlight = 64; // as many sessions at once: writes share commits
  for (let i = 0; i < n; i += inFlight)
    await Promise.all(Array.from({ length: Math.min(inFlight, n - i) }, (_, k) => one(i + k)));
}

function report(ctx: BenchContext, kind: string, bytes: number, n: number): void {
  const per = bytes / n;
  ctx.report({
    case: `store_bytes_per_delivery_${kind}`,
    metric: 'bytes',
    value: per,
    unit: 'B',
    note: `${n.toLocaleString('en')} deliveries (id and size, Dovecot holds the message), each classified for spam and acknowledged, over ${USERS} users: ${((per * 1e6) / 2 ** 20).toFixed(0)} MiB per million deliveries`,
  });
}

export default async function store(ctx: BenchContext): Promise<void> {
  const n = ctx.quick ? 5_000 : 100_000;

  const file = path.join(tempDir('pmf-bench-store-'), 'store.db');
  let sqlite = openSqliteStore(file);
  const sqliteUsers = await makeUsers(sqlite);
  await sqlite.close(); // the last connection checkpoints the WAL into store.db
  const size = () => fs.statSync(file).size;
  const before = size();
  sqlite = openSqliteStore(file);
  try {
    await deliverAndClassify(sqlite, sqliteUsers, n);
  } finally {
    await sqlite.close();
  }
  report(ctx, 'sqlite', size() - before, n);

  const missing = postgresMissing();
  if (missing) return console.error(`store: no PostgreSQL row: ${missing}`);
  const cluster = await startPostgres();
  try {
    const url = await cluster.database();
    const db = new pg.Pool({ connectionString: url, max: 1 });
    db.on('error', () => undefined); // the server stopping at the end
    const pgStore = await openPostgresStore(url);
    try {
      const measure = async () => {
        await db.query('VACUUM');
        return Number((await db.query('SELECT pg_database_size(current_database()) AS n')).rows[0].n);
      };
      const users = await makeUsers(pgStore);
      const before = await measure();
      await deliverAndClassify(pgStore, users, n);
      report(ctx, 'postgres', (await measure()) - before, n);
    } finally {
      await pgStore.close();
      await db.end();
    }
  } finally {
    await cluster.stop();
  }
}
