// The shared store: PostgreSQL through `pg`, for several provider instances
// behind a load balancer (provider-server/README.md#store). The same schema
// as store-sqlite.ts (both from store-schema.ts) and the same semantics; the
// schema is created or migrated at start under an advisory lock, so
// instances starting together do not race.
import pg from 'pg';
import { PipelinedConnections, SYNC_SEQUENCE, SyncConnection } from './postgres-connections.js';
import { POSTGRES_FUNCTIONS } from './store-postgres-functions.js';
import { keyEpochsTable, postgresSteps, WORDS } from './store-schema.js';
import { newKeySalt, Store, type Durability, type SqlDriver } from './store.js';
import { SyncRounds } from './sync-rounds.js';

/** A schema change: SQL, or a function for one that needs values from this process (a salt per user). */
type Migration = string | ((client: pg.ClientBase) => Promise<void>);

/**
 * Step 8 (store-schema.ts) in PostgreSQL: a key salt per account (SERIAL
 * never hands an id out again), key epochs moved from user ids to salts.
 */
const keySalts: Migration = async (client) => {
  await client.query('ALTER TABLE users ADD COLUMN key_salt BYTEA');
  const ids = (await client.query('SELECT id FROM users')).rows.map((r: { id: number }) => r.id);
  await client.query(
    'UPDATE users u SET key_salt = s.salt FROM unnest($1::int[], $2::bytea[]) AS s(id, salt) WHERE u.id = s.id',
    [ids, ids.map(() => newKeySalt())],
  );
  await client.query(`ALTER TABLE users ALTER COLUMN key_salt SET NOT NULL,
       ADD UNIQUE (key_salt), ADD CHECK (octet_length(key_salt) = 32);
     ${keyEpochsTable(WORDS.postgres)}
     INSERT INTO key_epochs (key_salt, model_id, model_version, epoch, used)
       SELECT u.key_salt, k.model_id, k.model_version, k.epoch + 1, 0 FROM user_keys k JOIN users u ON u.id = k.user_id;
     DROP TABLE user_keys;`);
};

const MIGRATIONS: Migration[] = postgresSteps().map((step) => (step === 'key-salts' ? keySalts : step));

export const POSTGRES_SCHEMA_VERSION = MIGRATIONS.length;

/** Any key: serializes schema changes of instances starting together. */
const MIGRATION_LOCK = 0x706d66;

/** Statements that only read: nothing to wait for (a call of the store's functions writes). */
const READ = /^\s*SELECT\b(?!\s+pmf_)/i;

/** The store's statements with PostgreSQL's `$n` placeholders: a fixed set, each rewritten once. */
const NUMBERED = new Map<string, string>();

/** `?` placeholders (the store's) to PostgreSQL's `$n`; the store's SQL has no `?` inside literals. */
function numbered(sql: string): string {
  let text = NUMBERED.get(sql);
  if (text === undefined) {
    let n = 0;
    NUMBERED.set(sql, (text = sql.replace(/\?/g, () => `$${++n}`)));
  }
  return text;
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

/**
 * Group commit, as the SQLite driver does it. Every statement commits
 * asynchronously (`synchronous_commit = off`): visible to every instance at
 * once, on disk once the WAL writer or a later synchronous commit flushes
 * the log. A durable write then waits for a sync round (SyncRounds): one
 * synchronous commit on a connection of its own that starts after the
 * write committed. The log is flushed in order, so that one flush covers
 * every commit before it, of this instance or another, and all durable
 * writes of a round share one disk sync. Bookkeeping (store.ts,
 * Durability) waits for nothing. Before, every statement waited for a sync
 * of its own: six per classification (rate, claim, key budget, answer, cap, acknowledgement).
 */
class PostgresDriver implements SqlDriver {
  readonly dialect = 'postgres';
  private readonly syncs: SyncRounds;

  constructor(
    private readonly connections: PipelinedConnections,
    private readonly syncer: SyncConnection,
  ) {
    this.syncs = new SyncRounds(() => syncer.sync());
  }

  async all<T>(sql: string, params: unknown[] = [], durability: Durability = 'durable'): Promise<T[]> {
    const { rows } = await this.connections.query(numbered(sql), params);
    if (durability === 'durable' && !READ.test(sql)) await this.durable();
    return rows as T[];
  }

  async run(sql: string, params: unknown[] = [], durability: Durability = 'durable'): Promise<number> {
    const { rowCount } = await this.connections.query(numbered(sql), params);
    if (durability === 'durable') await this.durable();
    return rowCount ?? 0;
  }

  /** Resolves once every commit made so far, by any instance, is on disk. */
  durable(): Promise<void> {
    return this.syncs.wait();
  }

  violated(e: unknown): 'unique' | 'foreign_key' | undefined {
    const code = (e as { code?: unknown }).code;
    if (code === '23505') return 'unique';
    if (code === '23503') return 'foreign_key';
    return undefined;
  }

  async schemaVersion(): Promise<number> {
    const r = await this.connections.query('SELECT version FROM pmf_schema', []);
    return r.rows[0]?.version ?? 0;
  }

  async close(): Promise<void> {
    await this.syncs.idle();
    await Promise.all([this.syncer.end(), this.connections.end()]);
  }
}

/**
 * Brings the schema to version `to` (the latest by default; tests make older
 * stores with less), on the connection it is given: the sync connection at
 * start (openPostgresStore). @internal
 */
export async function migratePostgres(client: pg.ClientBase, to = MIGRATIONS.length): Promise<void> {
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query('CREATE TABLE IF NOT EXISTS pmf_schema (version INTEGER NOT NULL)');
    await client.query(`CREATE SEQUENCE IF NOT EXISTS ${SYNC_SEQUENCE}`);
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
    await client.query(POSTGRES_FUNCTIONS);
    await client.query('COMMIT');
  } catch (e) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw e;
  }
}

/**
 * Connects to PostgreSQL (`postgres://user[:password]@host[:port]/db`, or
 * `?host=/socket/dir`), creating or migrating the schema; a store that cannot
 * be reached stops the server at start with the URL (password hidden).
 */
export async function openPostgresStore(url: string, opts: { maxConnections?: number } = {}): Promise<Store> {
  const config = { connectionString: url, types: TYPES };
  const syncer = new SyncConnection(config);
  try {
    await syncer.open((client) => migratePostgres(client));
  } catch (e) {
    await syncer.end();
    throw new Error(`store ${redactedUrl(url)}: ${(e as Error).message}`);
  }
  // Group commit (PostgresDriver): statements commit without waiting for the disk.
  const statements = { ...config, options: '-c synchronous_commit=off' };
  return new Store(new PostgresDriver(new PipelinedConnections(statements, opts.maxConnections ?? 4), syncer));
}
