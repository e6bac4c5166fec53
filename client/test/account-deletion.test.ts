// Deleting an account as an operator would, against the real provider (crypto
// workers, the bundled spam model) on SQLite and on PostgreSQL: with the
// delete-user command, and with a raw row delete (the sqlite3 shell's,
// foreign keys off). A user key must never come back with a fresh budget:
// not to a new account that got the freed id (SQLite handed the highest one
// out again), nor to the deleted account restored from a backup. The
// client's view (welcome, key-switching key, verdicts) is checked, and the
// provider's keys themselves, derived from the key file.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, describe, test, type TestContext } from 'node:test';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { Message } from '../../protocol/messages.js';
import { createConnector } from '../core/connect.js';
import { runClassification, type RunOutcome } from '../core/runner.js';
import { nodeSocket } from '../node/cli.js';
import { DirectoryStorage } from '../node/node-storage.js';
import { extractFeatures } from '../../models/features/index.js';
import { loadPlainModel, plainVerdict } from '../../models/plain/index.js';
import { HE_LWE_N, loadHe, type He } from '../../wasm/ts/he.js';
import { packLwe } from '../../wasm/test/he/lwe-layout.js';
import { main } from '../../provider-server/src/cli.js';
import { TestClient } from '../../provider-server/test/harness.js';
import { postgresMissing, startPostgres, type TestPostgres } from '../../provider-server/test/postgres.js';
import { BUNDLED_MODELS, startRealProvider, type RealProvider } from '../../provider-server/test/real-provider.js';
import { tempDir } from '../../scripts/test/temp-dir.js';

const BUDGET = 8;
const MAILS = [
  'Subject: WIN a FREE prize now\r\n\r\nClick here to claim your free money, limited offer, act now!!! viagra casino',
  'Subject: minutes of the meeting\r\n\r\nHi all, attached are the notes from Tuesday. The build is green again.',
  'Subject: cheap meds online\r\n\r\nBest price pharmacy, no prescription, order today and save 90%',
];
const plain = loadPlainModel(new Uint8Array(fs.readFileSync(BUNDLED_MODELS.spam)));
let he: He;

before(async () => {
  he = await loadHe();
});

/** What an operator can do to the store's rows by hand. */
interface RawStore {
  /** The account's row, every column, as a backup holds it. */
  row(name: string): Promise<Record<string, unknown>>;
  remove(name: string): Promise<void>;
  restore(row: Record<string, unknown>): Promise<void>;
  close(): Promise<void>;
}

function rawSqlite(file: string): RawStore {
  const db = new Database(file);
  db.pragma('foreign_keys = OFF'); // the sqlite3 shell's default
  return {
    row: async (name) => db.prepare('SELECT * FROM users WHERE name = ?').get(name) as Record<string, unknown>,
    remove: async (name) => void db.prepare('DELETE FROM users WHERE name = ?').run(name),
    restore: async (row) => {
      const cols = Object.keys(row);
      db.prepare(`INSERT INTO users (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`).run(
        ...Object.values(row),
      );
    },
    close: async () => void db.close(),
  };
}

function rawPostgres(url: string): RawStore {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  return {
    row: async (name) => (await pool.query('SELECT * FROM users WHERE name = $1', [name])).rows[0],
    remove: async (name) => void (await pool.query('DELETE FROM users WHERE name = $1', [name])),
    restore: async (row) => {
      const cols = Object.keys(row);
      await pool.query(
        `INSERT INTO users (${cols.join(', ')}) VALUES (${cols.map((_, i) => `$${i + 1}`).join(', ')})`,
        Object.values(row),
      );
    },
    close: () => pool.end(),
  };
}

function deletionSuite(kind: string, setup: () => Promise<{ provider: RealProvider; raw: RawStore }>): void {
  test(`${kind}: a deleted account's key never returns with a fresh budget, to a new account or to it restored`, async (t) => {
    const { provider, raw } = await setup();
    const version = provider.catalog.current('spam')!.version;
    const store = provider.store;
    const storeArgs = provider.config.store ? ['--store', provider.config.store] : [];
    const cli = async (...args: string[]): Promise<string> => {
      const out: string[] = [];
      t.mock.method(console, 'log', (line: string) => void out.push(line));
      const code = await main([...args, ...storeArgs]);
      t.mock.restoreAll();
      assert.equal(code, 0, `${args.join(' ')}: ${out.join('\n')}`);
      return out.join('\n');
    };
    process.env.PMF_DATA_DIR = provider.config.dataDir;
    try {
      await store.addUser('alice');
      const first = await store.addUser('mallory'); // the highest id
      const opened = await hello(provider, first.token);
      assert.equal(opened.keyEpoch, 1);
      await classify(t, provider, first.token, 'old', 3);
      const spent = await hello(provider, first.token);
      assert.equal(spent.keyBudget, BUDGET - 3, 'three verdicts spent three decryptions');
      assert.deepEqual(spent.ksk, opened.ksk, 'the key-switching key is fixed per key');

      // Deleted by hand and restored from a backup: the same key, so it goes on from where it was.
      const backup = await raw.row('mallory');
      await raw.remove('mallory');
      assert.equal(await refused(provider, first.token), 'unauthenticated');
      await raw.restore(backup);
      const restored = await hello(provider, await store.issueToken(first.userId));
      assert.deepEqual(
        { epoch: restored.keyEpoch, budget: restored.keyBudget },
        { epoch: 1, budget: BUDGET - 3 },
        'the restored account has no fresh budget on its key',
      );
      assert.deepEqual(restored.ksk, opened.ksk);

      // Deleted with delete-user, and a new account of the same name.
      assert.match(await cli('delete-user', 'mallory'), /^deleted user mallory \(id \d+\)/);
      await assert.rejects(main(['delete-user', 'mallory', ...storeArgs]), /no user mallory/);
      const second = { token: await cli('add-user', 'mallory'), userId: (await store.userId('mallory'))! };
      assert.ok(second.userId > first.userId, `a new id: ${second.userId} after ${first.userId}`);
      assert.equal(await refused(provider, first.token), 'unauthenticated');
      const fresh = await hello(provider, second.token);
      assert.deepEqual({ epoch: fresh.keyEpoch, budget: fresh.keyBudget }, { epoch: 1, budget: BUDGET });
      assert.notDeepEqual(fresh.ksk, opened.ksk, 'another key');
      await classify(t, provider, second.token, 'new', 3);
      const secondSalt = (await store.userKey(second.userId, 'spam', version))!.salt;

      // Deleted by hand, and add-user: SQLite gave the freed highest id, hence its key, out again.
      await raw.remove('mallory');
      const third = { token: await cli('add-user', 'mallory'), userId: (await store.userId('mallory'))! };
      assert.ok(third.userId > second.userId, `a new id: ${third.userId} after ${second.userId}`);
      const other = await hello(provider, third.token);
      assert.deepEqual({ epoch: other.keyEpoch, budget: other.keyBudget }, { epoch: 1, budget: BUDGET });
      for (const ksk of [opened.ksk, fresh.ksk]) assert.notDeepEqual(other.ksk, ksk, 'another key');

      // The provider's keys themselves: every account's decrypts independently of the others'.
      const thirdSalt = (await store.userKey(third.userId, 'spam', version))!.salt;
      assertIndependent(provider, [backup.key_salt as Uint8Array, secondSalt, thirdSalt]);
    } finally {
      delete process.env.PMF_DATA_DIR;
      await raw.close();
      await provider.close();
    }
  });
}

/** A welcome for `token` (the client holds no key: keyEpoch 0). */
async function hello(provider: RealProvider, token: string): Promise<Extract<Message, { name: 'welcome' }>> {
  const m = await helloReply(provider, token);
  assert.ok(m.name === 'welcome', JSON.stringify(m));
  return m;
}

async function refused(provider: RealProvider, token: string): Promise<string> {
  const m = await helloReply(provider, token);
  return m.name === 'error' ? m.code : m.name;
}

async function helloReply(provider: RealProvider, token: string): Promise<Message> {
  const c = await TestClient.connect(provider.server.wsUrl);
  try {
    const version = provider.catalog.current('spam')!.version;
    return await c.request('hello', 1, {
      token,
      modelId: 'spam',
      modelVersion: version,
      clientNonce: he.randomSeed(),
      keyEpoch: 0,
    });
  } finally {
    c.close();
  }
}

/** `n` messages delivered to the token's account and classified by the real client: each verdict the plaintext model's. */
async function classify(t: TestContext, provider: RealProvider, token: string, prefix: string, n: number) {
  const userId = (await provider.store.authenticate(token))!;
  const ids = MAILS.slice(0, n).map((_, i) => `${prefix}-${i}`);
  for (const [i, id] of ids.entries()) await provider.store.deliver(userId, id, MAILS[i]);
  const connector = createConnector({
    server: provider.server.httpUrl,
    token,
    he,
    storage: new DirectoryStorage(path.join(tempDir('pmf-deletion-'), 'cache')),
    socket: nodeSocket,
  });
  const outcomes: RunOutcome[] = [];
  await runClassification(
    ids.map((id, i) => ({ id, raw: async () => MAILS[i] })),
    { connect: (k) => connector.connect(k), onOutcome: (o) => void outcomes.push(o) },
  );
  assert.equal(outcomes.length, n);
  for (const [i, o] of outcomes.entries()) {
    assert.ok(o.kind === 'verdict' && !o.invalidOutput, JSON.stringify(o));
    const reference = plainVerdict(plain, await extractFeatures(MAILS[i], connector.model()!.spec));
    assert.equal(o.label, reference, `${t.name}: ${o.messageId} decrypted under this account's key`);
  }
}

/** The user keys of these salts (epoch 1) decrypt random ciphertexts to unrelated values. */
function assertIndependent(provider: RealProvider, salts: Uint8Array[]): void {
  const served = provider.catalog.current('spam')!;
  const bytes = new Uint8Array(fs.readFileSync(served.keyFile));
  const modelKey = he.loadSecretKey(bytes);
  bytes.fill(0);
  const seed = Buffer.from(served.providerSeed, 'hex');
  const keys = salts.map((salt) => modelKey.userKey(seed, { salt, epoch: 1 }));
  const { Q } = served.params;
  const below = (bits: number): bigint => BigInt(`0x${randomBytes(8).toString('hex')}`) & ((1n << BigInt(bits)) - 1n);
  const probes = Array.from({ length: 16 }, () =>
    packLwe(
      below(Q),
      Array.from({ length: HE_LWE_N }, () => below(Q - 1)),
      Q,
    ),
  );
  const decrypted = keys.map((k) => probes.map((p) => k.forContext(served.params).decryptLwe(p)));
  for (let i = 0; i < keys.length; i++)
    for (let j = i + 1; j < keys.length; j++) {
      const same = decrypted[i].filter((y, k) => y === decrypted[j][k]).length;
      assert.ok(same <= 1, `keys ${i} and ${j} agree on ${same} of 16 decryptions`);
    }
  for (const k of [modelKey, ...keys]) k.dispose();
}

const limits = { userKeyBudget: BUDGET, hellosPerMinute: 200, requestsPerMinute: 10_000 };

deletionSuite('sqlite', async () => {
  const provider = await startRealProvider({ overrides: { limits } });
  return { provider, raw: rawSqlite(path.join(provider.config.dataDir, 'store.db')) };
});

const missing = postgresMissing();
describe('postgres', { skip: missing }, () => {
  let cluster: TestPostgres | undefined;
  before(async () => {
    cluster = await startPostgres();
  });
  after(async () => {
    await cluster?.stop();
  });
  deletionSuite('postgres', async () => {
    const url = await cluster!.database();
    const provider = await startRealProvider({ overrides: { store: url, limits } });
    return { provider, raw: rawPostgres(url) };
  });
});
