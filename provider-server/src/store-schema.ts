// The store's schema, written once for both databases: each step's DDL is
// made from its dialect's words (a byte string, a 64-bit integer, an
// auto-numbered key, the time now), and store-sqlite.ts and
// store-postgres.ts run the steps as their migrations. SQLite numbers its
// schema versions by these steps; PostgreSQL, added when SQLite was at step
// 5, made steps 1 to 5 its version 1, and each later step is one version.
// Step 8 changes data as well (a key salt per account), which each store
// does its own way around the DDL here (keyEpochsTable).
import { remoteIndexSchema, type Dialect } from './remote-index/schema.js';

export type { Dialect };

/** A dialect's words for what the two databases spell differently. */
export interface Words {
  dialect: Dialect;
  bytes: string;
  big: string;
  /** An integer primary key numbered by the database. */
  serialKey: string;
  /** Milliseconds since the epoch, now. */
  nowMs: string;
}

export const WORDS: Record<Dialect, Words> = {
  sqlite: {
    dialect: 'sqlite',
    bytes: 'BLOB',
    big: 'INTEGER',
    serialKey: 'INTEGER PRIMARY KEY',
    nowMs: "CAST(strftime('%s', 'now') AS INTEGER) * 1000",
  },
  postgres: {
    dialect: 'postgres',
    bytes: 'BYTEA',
    big: 'BIGINT',
    serialKey: 'SERIAL PRIMARY KEY',
    nowMs: '(extract(epoch FROM now()) * 1000)::bigint',
  },
};

/** A schema step: its DDL, or the key-salt step that each store runs itself. */
export type Step = ((t: Words) => string) | 'key-salts';

/** The key epochs of each account's key salt (step 8). */
export const keyEpochsTable = (t: Words): string => `CREATE TABLE key_epochs (
     key_salt ${t.bytes} NOT NULL,
     model_id TEXT NOT NULL,
     model_version INTEGER NOT NULL,
     epoch INTEGER NOT NULL,
     used INTEGER NOT NULL,
     PRIMARY KEY (key_salt, model_id, model_version)
   );`;

/** A table of per-user counts in fixed windows (store-rates.ts). */
const windowTable = (name: string, t: Words): string => `CREATE TABLE ${name} (
     user_id INTEGER NOT NULL,
     window_start ${t.big} NOT NULL,
     count INTEGER NOT NULL,
     PRIMARY KEY (user_id, window_start)
   );`;

export const STEPS: Step[] = [
  // 1: initial schema
  (t) => `CREATE TABLE users (
     id ${t.serialKey},
     name TEXT NOT NULL UNIQUE,
     created_at ${t.big} NOT NULL
   );
   CREATE TABLE tokens (
     token_sha256 ${t.bytes} PRIMARY KEY,
     user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
     created_at ${t.big} NOT NULL
   );
   CREATE TABLE messages (
     user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
     message_id TEXT NOT NULL,
     raw ${t.bytes} NOT NULL,
     from_addr TEXT NOT NULL,
     subject TEXT NOT NULL,
     date TEXT NOT NULL,
     delivered_at ${t.big} NOT NULL,
     PRIMARY KEY (user_id, message_id)
   );
   CREATE TABLE classified (
     user_id INTEGER NOT NULL,
     message_id TEXT NOT NULL,
     task TEXT NOT NULL,
     classified_at ${t.big} NOT NULL,
     PRIMARY KEY (user_id, message_id, task),
     FOREIGN KEY (user_id, message_id) REFERENCES messages(user_id, message_id) ON DELETE CASCADE
   );
   ${windowTable('rate_windows', t)}`,
  // 2: per-user key epochs (decryption budget, docs/security.md) and hello rate windows
  (t) => `CREATE TABLE user_keys (
     user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
     model_id TEXT NOT NULL,
     model_version INTEGER NOT NULL,
     epoch INTEGER NOT NULL,
     used INTEGER NOT NULL,
     PRIMARY KEY (user_id, model_id, model_version)
   );
   ${windowTable('hello_windows', t)}`,
  // 3: decoded topics (what the provider learns, docs/threat-model.md#non-negotiable-properties) and the users' topic opt-out (docs/protocol.md#topic-extraction)
  (t) => `CREATE TABLE topics (
     user_id INTEGER NOT NULL,
     message_id TEXT NOT NULL,
     model_id TEXT NOT NULL,
     model_version INTEGER NOT NULL,
     topic INTEGER NOT NULL,
     recorded_at ${t.big} NOT NULL,
     PRIMARY KEY (user_id, message_id),
     FOREIGN KEY (user_id, message_id) REFERENCES messages(user_id, message_id) ON DELETE CASCADE
   );
   CREATE TABLE topic_settings (
     user_id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
     opted_out INTEGER NOT NULL,
     updated_at ${t.big} NOT NULL
   );`,
  // 4: webmail folders (the extension moves spam to Junk)
  () => `ALTER TABLE messages ADD COLUMN folder TEXT NOT NULL DEFAULT 'inbox';`,
  // 5: exactly-once verdicts (docs/protocol.md#exactly-once-verdicts): the request a claim is bound to,
  // the computation holding it until its answer is recorded, and the recorded answer. Older claims
  // have no attempt: their answers left, so they stay classified.
  (t) => `ALTER TABLE classified ADD COLUMN request_sha256 ${t.bytes};
   ALTER TABLE classified ADD COLUMN attempt ${t.bytes};
   ALTER TABLE classified ADD COLUMN answer ${t.bytes};`,
  // 6: finding recorded answers nobody acknowledged (Store.pruneAnswers) without a scan
  () => `CREATE INDEX classified_unacknowledged ON classified (classified_at) WHERE answer IS NOT NULL;`,
  // 7: one user's recorded answers, newest first (Store.capAnswers)
  () => `CREATE INDEX classified_user_unacknowledged ON classified (user_id, classified_at) WHERE answer IS NOT NULL;`,
  // 8: user keys from a random salt per account (docs/security.md#deleted-accounts): ids are never
  // handed out again, and key epochs belong to the salt, kept when the account goes
  'key-salts',
  // 9: blocklist OPRF evaluations per user and UTC day (docs/blocklist.md#daily-cap)
  (t) => windowTable('oprf_windows', t),
  // 10: the health check's write and read (Store.probe), one row per instance
  (t) => `CREATE TABLE health_probes (
     instance TEXT PRIMARY KEY,
     probed_at ${t.big} NOT NULL
   );`,
  // 11: a delivery's size; bodies are kept only for the demo webmail, and dropped after a retention
  // period (Store.pruneBodies: an empty raw is no body)
  (t) => `ALTER TABLE messages ADD COLUMN bytes ${t.big} NOT NULL DEFAULT 0;
   UPDATE messages SET bytes = length(raw);
   CREATE INDEX messages_kept_bodies ON messages (delivered_at) WHERE length(raw) > 0;`,
  // 12: token lifetimes, kinds and per-user caps (tokens.ts); tokens issued before live from the upgrade on
  (t) => `ALTER TABLE tokens ADD COLUMN kind TEXT NOT NULL DEFAULT 'cli';
   ALTER TABLE tokens ADD COLUMN last_used_at ${t.big} NOT NULL DEFAULT 0;
   UPDATE tokens SET last_used_at = ${t.nowMs};
   CREATE INDEX tokens_user ON tokens (user_id, last_used_at);
   CREATE INDEX tokens_last_used ON tokens (last_used_at);`,
  // 13: new connections per address and network per minute, counted across instances (connection-gate.ts)
  (t) => `CREATE TABLE connection_windows (
     window_start ${t.big} NOT NULL,
     key TEXT NOT NULL,
     count INTEGER NOT NULL,
     PRIMARY KEY (window_start, key)
   );`,
  // 14: the remote search index (docs/remote-search.md#provider-store)
  (t) => remoteIndexSchema(t.dialect),
  // 15: the rate counts delivered messages (message-rate.ts): frames per message, whether it was
  // counted, new messages per user and UTC day, and each key salt's backlog allowance
  (t) => `ALTER TABLE messages ADD COLUMN rate_frames INTEGER NOT NULL DEFAULT 0;
   ALTER TABLE messages ADD COLUMN rate_counted INTEGER NOT NULL DEFAULT 0;
   ${windowTable('message_windows', t)}
   CREATE TABLE backlog_allowance (
     key_salt ${t.bytes} NOT NULL,
     kind TEXT NOT NULL,
     used INTEGER NOT NULL,
     PRIMARY KEY (key_salt, kind)
   );`,
];

/** The PostgreSQL store's first version: steps 1 to 5. */
export const POSTGRES_FIRST = 5;

/** The DDL of each SQLite schema version (the key-salt step as is). */
export function sqliteSteps(): (string | 'key-salts')[] {
  return STEPS.map((s) => (s === 'key-salts' ? s : s(WORDS.sqlite)));
}

/** The DDL of each PostgreSQL schema version: steps 1 to 5 in one, then one step each. */
export function postgresSteps(): (string | 'key-salts')[] {
  const all = STEPS.map((s) => (s === 'key-salts' ? s : s(WORDS.postgres)));
  return [all.slice(0, POSTGRES_FIRST).join('\n'), ...all.slice(POSTGRES_FIRST)];
}
