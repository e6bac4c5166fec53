// The shared store: PostgreSQL through `pg`, for several provider instances
// behind a load balancer (provider-server/README.md#store). Same tables and
// semantics as store-sqlite.ts; the schema is created or migrated at start
// under an advisory lock, so instances starting together do not race.
import pg from 'pg';
import { remoteIndexSchema } from './remote-index/schema.js';
import { newKeySalt, Store, type SqlDriver } from './store.js';

/** A schema change: SQL, or a function for one that needs values from this process (a salt per user). */
type Migration = string | ((client: pg.PoolClient) => Promise<void>);

const MIGRATIONS: Migration[] = [
  // 1: the schema of SQLite migrations 1-5 in one step
  `CREATE TABLE users (
     id SERIAL PRIMARY KEY,
     name TEXT NOT NULL UNIQUE,
     created_at BIGINT NOT NULL
   );
   CREATE TABLE tokens (
     token_sha256 BYTEA PRIMARY KEY,
     user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
     created_at BIGINT NOT NULL
   );
   CREATE TABLE messages (
     user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
     message_id TEXT NOT NULL,
     raw BYTEA NOT NULL,
     from_addr TEXT NOT NULL,
     subject TEXT NOT NULL,
     date TEXT NOT NULL,
     delivered_at BIGINT NOT NULL,
     folder TEXT NOT NULL DEFAULT 'inbox',
     PRIMARY KEY (user_id, message_id)
   );
   CREATE TABLE classified (
     user_id INTEGER NOT NULL,
     message_id TEXT NOT NULL,
     task TEXT NOT NULL,
     classified_at BIGINT NOT NULL,
     request_sha256 BYTEA,
     attempt BYTEA,
     answer BYTEA,
     PRIMARY KEY (user_id, message_id, task),
     FOREIGN KEY (user_id, message_id) REFERENCES messages(user_id, message_id) ON DELETE CASCADE
   );
   CREATE TABLE rate_windows (
     user_id INTEGER NOT NULL,
     window_start BIGINT NOT NULL,
     count INTEGER NOT NULL,
     PRIMARY KEY (user_id, window_start)
   );
   CREATE TABLE hello_windows (
     user_id INTEGER NOT NULL,
     window_start BIGINT NOT NULL,
     count INTEGER NOT NULL,
     PRIMARY KEY (user_id, window_start)
   );
   CREATE TABLE user_keys (
     user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
     model_id TEXT NOT NULL,
     model_version INTEGER NOT NULL,
     epoch INTEGER NOT NULL,
     used INTEGER NOT NULL,
     PRIMARY KEY (user_id, model_id, model_version)
   );
   CREATE TABLE topics (
     user_id INTEGER NOT NULL,
     message_id TEXT NOT NULL,
     model_id TEXT NOT NULL,
     model_version INTEGER NOT NULL,
     topic INTEGER NOT NULL,
     recorded_at BIGINT NOT NULL,
     PRIMARY KEY (user_id, message_id),
     FOREIGN KEY (user_id, message_id) REFERENCES messages(user_id, message_id) ON DELETE CASCADE
   );
   CREATE TABLE topic_settings (
     user_id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
     opted_out INTEGER NOT NULL,
     updated_at BIGINT NOT NULL
   );`,
  // 2: SQLite migration 6
  `CREATE INDEX classified_unacknowledged ON classified (classified_at) WHERE answer IS NOT NULL;`,
  // 3: SQLite migration 7
  `CREATE INDEX classified_user_unacknowledged ON classified (user_id, classified_at) WHERE answer IS NOT NULL;`,
  // 4: SQLite migration 8 (SERIAL never hands an id out again)
  async (client) => {
    await client.query('ALTER TABLE users ADD COLUMN key_salt BYTEA');
    const ids = (await client.query('SELECT id FROM users')).rows.map((r: { id: number }) => r.id);
    await client.query(
      'UPDATE users u SET key_salt = s.salt FROM unnest($1::int[], $2::bytea[]) AS s(id, salt) WHERE u.id = s.id',
      [ids, ids.map(() => newKeySalt())],
    );
    await client.query(`ALTER TABLE users ALTER COLUMN key_salt SET NOT NULL,
       ADD UNIQUE (key_salt), ADD CHECK (octet_length(key_salt) = 32);
     CREATE TABLE key_epochs (
       key_salt BYTEA NOT NULL,
       model_id TEXT NOT NULL,
       model_version INTEGER NOT NULL,
       epoch INTEGER NOT NULL,
       used INTEGER NOT NULL,
       PRIMARY KEY (key_salt, model_id, model_version)
     );
     INSERT INTO key_epochs (key_salt, model_id, model_version, epoch, used)
       SELECT u.key_salt, k.model_id, k.model_version, k.epoch + 1, 0 FROM user_keys k JOIN users u ON u.id = k.user_id;
     DROP TABLE user_keys;`);
  },
  // 5: SQLite migration 9
  `CREATE TABLE oprf_windows (
     user_id INTEGER NOT NULL,
     window_start BIGINT NOT NULL,
     count INTEGER NOT NULL,
     PRIMARY KEY (user_id, window_start)
   );`,
  // 6: SQLite migration 10
  remoteIndexSchema('postgres'),
];

export const POSTGRES_SCHEMA_VERSION = MIGRATIONS.length;

/** Any key: serializes schema changes of instances starting together. */
const MIGRATION_LOCK = 0x706d66;

/** `?` placeholders (the store's) to PostgreSQL's `$n`; the store's SQL has no `?` inside literals. */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/** The URL without its password, for error messages and logs. */
export function redactedUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return 'postgres://(unparsable URL)';
  }
}

/** BIGINT (timestamps, counts) as numbers: every value the store keeps is far below 2^53. */
const TYPES = {
  getTypeParser: ((oid: number, format?: string) =>
    oid === pg.types.builtins.INT8 ? Number : pg.types.getTypeParser(oid, format as 'text')) as never,
};

class PostgresDriver implements SqlDriver {
  constructor(private readonly pool: pg.Pool) {}

  async all<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    return (await this.pool.query(numbered(sql), params)).rows as T[];
  }

  async run(sql: string, params: unknown[] = []): Promise<number> {
    return (await this.pool.query(numbered(sql), params)).rowCount ?? 0;
  }

  /** Every statement commits durably (synchronous_commit) before others see it. */
  async durable(): Promise<void> {}

  violated(e: unknown): 'unique' | 'foreign_key' | undefined {
    const code = (e as { code?: unknown }).code;
    if (code === '23505') return 'unique';
    if (code === '23503') return 'foreign_key';
    return undefined;
  }

  async schemaVersion(): Promise<number> {
    const r = await this.pool.query('SELECT version FROM pmf_schema');
    return r.rows[0]?.version ?? 0;
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}

/** Brings the schema to version `to` (the latest by default; tests make older stores with less). @internal */
export async function migratePostgres(pool: pg.Pool, to = MIGRATIONS.length): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query('CREATE TABLE IF NOT EXISTS pmf_schema (version INTEGER NOT NULL)');
    const row = (await client.query('SELECT version FROM pmf_schema')).rows[0] as { version: number } | undefined;
    const current = row?.version ?? 0;
    if (current > MIGRATIONS.length) {
      throw new Error(`store schema version ${current} is newer than this server (${MIGRATIONS.length})`);
    }
    for (let v = current; v < to; v++) {
      const m = MIGRATIONS[v];
      if (typeof m === 'string') await client.query(m);
      else await m(client);
    }
    const version = Math.max(current, to);
    if (!row) await client.query('INSERT INTO pmf_schema (version) VALUES ($1)', [version]);
    else await client.query('UPDATE pmf_schema SET version = $1', [version]);
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  } finally {
    client.release();
  }
}

/**
 * Connects to PostgreSQL (`postgres://user[:password]@host[:port]/db`, or
 * `?host=/socket/dir`), creating or migrating the schema; a store that cannot
 * be reached stops the server at start with the URL (password hidden).
 */
export async function openPostgresStore(url: string, opts: { maxConnections?: number } = {}): Promise<Store> {
  const pool = new pg.Pool({ connectionString: url, max: opts.maxConnections ?? 10, types: TYPES });
  // An idle connection the server dropped must not crash the process: the next query reconnects.
  pool.on('error', () => undefined);
  try {
    await migratePostgres(pool);
  } catch (e) {
    await pool.end().catch(() => undefined);
    throw new Error(`store ${redactedUrl(url)}: ${(e as Error).message}`);
  }
  return new Store(new PostgresDriver(pool));
}
