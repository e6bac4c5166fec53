// The provider's only state (docs/protocol.md#provider-state: sessions are stateless apart from
// this): users and their bearer tokens (stored as SHA-256 only), the registry
// of delivered messages per user with their raw, still-encrypted MIME, which
// message ids were already classified (docs/protocol.md#at-most-once-classification: at most once per user), and
// per-user rate-limit windows. SQLite through better-sqlite3; schema changes
// are numbered migrations tracked in PRAGMA user_version.
import Database from 'better-sqlite3';
import { createHash, randomBytes } from 'node:crypto';

const MIGRATIONS: string[] = [
  // 1: initial schema
  `CREATE TABLE users (
     id INTEGER PRIMARY KEY,
     name TEXT NOT NULL UNIQUE,
     created_at INTEGER NOT NULL
   );
   CREATE TABLE tokens (
     token_sha256 BLOB PRIMARY KEY,
     user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
     created_at INTEGER NOT NULL
   );
   CREATE TABLE messages (
     user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
     message_id TEXT NOT NULL,
     raw BLOB NOT NULL,
     from_addr TEXT NOT NULL,
     subject TEXT NOT NULL,
     date TEXT NOT NULL,
     delivered_at INTEGER NOT NULL,
     PRIMARY KEY (user_id, message_id)
   );
   CREATE TABLE classified (
     user_id INTEGER NOT NULL,
     message_id TEXT NOT NULL,
     task TEXT NOT NULL,
     classified_at INTEGER NOT NULL,
     PRIMARY KEY (user_id, message_id, task),
     FOREIGN KEY (user_id, message_id) REFERENCES messages(user_id, message_id) ON DELETE CASCADE
   );
   CREATE TABLE rate_windows (
     user_id INTEGER NOT NULL,
     window_start INTEGER NOT NULL,
     count INTEGER NOT NULL,
     PRIMARY KEY (user_id, window_start)
   );`,
  // 2: per-user key epochs (decryption budget, docs/security.md) and hello rate windows
  `CREATE TABLE user_keys (
     user_id INTEGER NOT NULL REFERENCES users(id) ON DELETE CASCADE,
     model_id TEXT NOT NULL,
     model_version INTEGER NOT NULL,
     epoch INTEGER NOT NULL,
     used INTEGER NOT NULL,
     PRIMARY KEY (user_id, model_id, model_version)
   );
   CREATE TABLE hello_windows (
     user_id INTEGER NOT NULL,
     window_start INTEGER NOT NULL,
     count INTEGER NOT NULL,
     PRIMARY KEY (user_id, window_start)
   );`,
  // 3: decoded topics (what the provider learns, docs/threat-model.md#non-negotiable-properties) and the users' topic opt-out (docs/protocol.md#topic-extraction)
  `CREATE TABLE topics (
     user_id INTEGER NOT NULL,
     message_id TEXT NOT NULL,
     model_id TEXT NOT NULL,
     model_version INTEGER NOT NULL,
     topic INTEGER NOT NULL,
     recorded_at INTEGER NOT NULL,
     PRIMARY KEY (user_id, message_id),
     FOREIGN KEY (user_id, message_id) REFERENCES messages(user_id, message_id) ON DELETE CASCADE
   );
   CREATE TABLE topic_settings (
     user_id INTEGER PRIMARY KEY REFERENCES users(id) ON DELETE CASCADE,
     opted_out INTEGER NOT NULL,
     updated_at INTEGER NOT NULL
   );`,
  // 4: webmail folders (the extension moves spam to Junk)
  `ALTER TABLE messages ADD COLUMN folder TEXT NOT NULL DEFAULT 'inbox';`,
];

/** The demo webmail's folders. */
export type Folder = 'inbox' | 'junk';

/** Rate-limit windows: spam/OT requests and hellos are counted apart. */
const RATE_TABLES = { requests: 'rate_windows', hello: 'hello_windows' } as const;

/** A user's key epoch for one model version and how many decryptions it has served. */
export interface UserKeyState {
  epoch: number;
  used: number;
}

export const MESSAGE_ID_MAX = 256;

export type ClaimResult = 'claimed' | 'unknown_message' | 'already_classified';

export interface MessageSummary {
  id: string;
  from: string;
  subject: string;
  date: string;
  folder: Folder;
}

const sha256 = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** Reads From/Subject/Date from the (cleartext) outer header block. */
function outerHeaders(raw: string): { from: string; subject: string; date: string } {
  const end = raw.search(/\r?\n\r?\n/);
  const block = (end < 0 ? raw : raw.slice(0, end)).replace(/\r?\n[ \t]+/g, ' ');
  const get = (name: string): string => {
    const m = block.match(new RegExp(`^${name}:[ \\t]*(.*)$`, 'im'));
    return m ? m[1].trim().slice(0, 512) : '';
  };
  return { from: get('From'), subject: get('Subject'), date: get('Date') };
}

/** Opens the database and checks every page: a damaged store stops the server at start, not at each request. */
function openChecked(file: string): Database.Database {
  let db: Database.Database | undefined;
  try {
    db = new Database(file);
    db.pragma('journal_mode = WAL');
    const check = db.pragma('quick_check', { simple: true });
    if (check !== 'ok') throw new Error(String(check));
    return db;
  } catch (e) {
    db?.close();
    throw new Error(`store ${file} is damaged (${(e as Error).message}); restore it from a backup`);
  }
}

export class Store {
  private readonly db: Database.Database;

  /** Opens (creating and migrating) the store; `':memory:'` for tests. */
  constructor(file: string) {
    this.db = openChecked(file);
    this.db.pragma('foreign_keys = ON');
    this.db.pragma('busy_timeout = 5000');
    this.migrate();
  }

  private migrate(): void {
    const current = this.db.pragma('user_version', { simple: true }) as number;
    if (current > MIGRATIONS.length) {
      throw new Error(`store schema version ${current} is newer than this server (${MIGRATIONS.length})`);
    }
    for (let v = current; v < MIGRATIONS.length; v++) {
      this.db.transaction(() => {
        this.db.exec(MIGRATIONS[v]);
        this.db.pragma(`user_version = ${v + 1}`);
      })();
    }
  }

  get schemaVersion(): number {
    return this.db.pragma('user_version', { simple: true }) as number;
  }

  close(): void {
    this.db.close();
  }

  /** Creates a user and returns a fresh bearer token (shown once, stored hashed). */
  addUser(name: string): { userId: number; token: string } {
    if (!/^[A-Za-z0-9._@+-]{1,128}$/.test(name)) throw new Error('user name must match [A-Za-z0-9._@+-]{1,128}');
    if (this.userId(name) !== undefined) throw new Error(`user ${name} already exists`);
    const info = this.db.prepare('INSERT INTO users (name, created_at) VALUES (?, ?)').run(name, Date.now());
    const userId = Number(info.lastInsertRowid);
    return { userId, token: this.issueToken(userId) };
  }

  userId(name: string): number | undefined {
    const row = this.db.prepare('SELECT id FROM users WHERE name = ?').get(name) as { id: number } | undefined;
    return row?.id;
  }

  /**
   * A fresh bearer token: 256 random bits, base64url, behind a "pmf_" prefix so
   * it never starts with "-" (command lines would read it as an option) and
   * secret scanners can recognize a leaked one.
   */
  issueToken(userId: number): string {
    const token = `pmf_${randomBytes(32).toString('base64url')}`;
    this.db
      .prepare('INSERT INTO tokens (token_sha256, user_id, created_at) VALUES (?, ?, ?)')
      .run(sha256(token), userId, Date.now());
    return token;
  }

  revokeToken(token: string): void {
    this.db.prepare('DELETE FROM tokens WHERE token_sha256 = ?').run(sha256(token));
  }

  /**
   * The user a bearer token belongs to. Lookup is by the token's SHA-256, so
   * timing reveals nothing useful about stored tokens.
   */
  authenticate(token: string): number | undefined {
    if (typeof token !== 'string' || token.length === 0 || token.length > 256) return undefined;
    const row = this.db.prepare('SELECT user_id FROM tokens WHERE token_sha256 = ?').get(sha256(token)) as
      { user_id: number } | undefined;
    return row?.user_id;
  }

  /** Registers a delivered message (raw MIME, usually OpenPGP-encrypted) for a user. */
  deliver(userId: number, messageId: string, rawMime: string | Uint8Array): void {
    if (typeof messageId !== 'string' || messageId.length === 0 || Buffer.byteLength(messageId) > MESSAGE_ID_MAX) {
      throw new Error(`message id must be 1..${MESSAGE_ID_MAX} bytes`);
    }
    const raw = typeof rawMime === 'string' ? Buffer.from(rawMime, 'utf8') : Buffer.from(rawMime);
    const h = outerHeaders(raw.toString('utf8'));
    try {
      this.db
        .prepare(
          'INSERT INTO messages (user_id, message_id, raw, from_addr, subject, date, delivered_at) VALUES (?, ?, ?, ?, ?, ?, ?)',
        )
        .run(userId, messageId, raw, h.from, h.subject, h.date, Date.now());
    } catch (e) {
      const code = (e as { code?: unknown }).code;
      if (code === 'SQLITE_CONSTRAINT_PRIMARYKEY')
        throw new Error(`message ${messageId} was already delivered to this user`);
      if (code === 'SQLITE_CONSTRAINT_FOREIGNKEY') throw new Error(`user ${userId} does not exist`);
      throw e;
    }
  }

  listMessages(userId: number, folder?: Folder): MessageSummary[] {
    return this.db
      .prepare(
        'SELECT message_id AS id, from_addr AS "from", subject, date, folder FROM messages WHERE user_id = ? AND (? IS NULL OR folder = ?) ORDER BY delivered_at, message_id',
      )
      .all(userId, folder ?? null, folder ?? null) as MessageSummary[];
  }

  /** Moves a message to a folder; false if this user has no such message. */
  moveMessage(userId: number, messageId: string, folder: Folder): boolean {
    return (
      this.db
        .prepare('UPDATE messages SET folder = ? WHERE user_id = ? AND message_id = ?')
        .run(folder, userId, messageId).changes === 1
    );
  }

  getMessage(userId: number, messageId: string): { raw: string } | undefined {
    const row = this.db
      .prepare('SELECT raw FROM messages WHERE user_id = ? AND message_id = ?')
      .get(userId, messageId) as { raw: Buffer } | undefined;
    return row ? { raw: row.raw.toString('utf8') } : undefined;
  }

  /**
   * Atomically records that `messageId` is being classified for `task`.
   * Refuses ids never delivered to this user and ids already classified, so
   * each delivered message yields at most one verdict (docs/protocol.md#at-most-once-classification).
   */
  claim(userId: number, messageId: string, task = 'spam'): ClaimResult {
    return this.db.transaction((): ClaimResult => {
      const delivered = this.db
        .prepare('SELECT 1 FROM messages WHERE user_id = ? AND message_id = ?')
        .get(userId, messageId);
      if (!delivered) return 'unknown_message';
      const info = this.db
        .prepare('INSERT OR IGNORE INTO classified (user_id, message_id, task, classified_at) VALUES (?, ?, ?, ?)')
        .run(userId, messageId, task, Date.now());
      return info.changes === 1 ? 'claimed' : 'already_classified';
    })();
  }

  /**
   * Undoes a claim when the provider failed before any answer left it (the
   * client learnt nothing), so the message can be classified again.
   */
  releaseClaim(userId: number, messageId: string, task = 'spam'): void {
    this.db
      .prepare('DELETE FROM classified WHERE user_id = ? AND message_id = ? AND task = ?')
      .run(userId, messageId, task);
  }

  isClassified(userId: number, messageId: string, task = 'spam'): boolean {
    return !!this.db
      .prepare('SELECT 1 FROM classified WHERE user_id = ? AND message_id = ? AND task = ?')
      .get(userId, messageId, task);
  }

  /**
   * Counts one request against the user's fixed one-minute window; false when
   * the limit is reached (the request must then be refused).
   */
  takeRate(
    userId: number,
    limitPerMinute: number,
    now = Date.now(),
    kind: keyof typeof RATE_TABLES = 'requests',
  ): boolean {
    const table = RATE_TABLES[kind];
    const window = Math.floor(now / 60_000) * 60_000;
    return this.db.transaction((): boolean => {
      this.db.prepare(`DELETE FROM ${table} WHERE user_id = ? AND window_start < ?`).run(userId, window);
      const row = this.db
        .prepare(`SELECT count FROM ${table} WHERE user_id = ? AND window_start = ?`)
        .get(userId, window) as { count: number } | undefined;
      if ((row?.count ?? 0) >= limitPerMinute) return false;
      this.db
        .prepare(
          `INSERT INTO ${table} (user_id, window_start, count) VALUES (?, ?, 1) ON CONFLICT(user_id, window_start) DO UPDATE SET count = count + 1`,
        )
        .run(userId, window);
      return true;
    })();
  }

  /** The user's current key epoch for a model version (epoch 1 on first use). */
  userKey(userId: number, modelId: string, version: number): UserKeyState {
    this.db
      .prepare('INSERT OR IGNORE INTO user_keys (user_id, model_id, model_version, epoch, used) VALUES (?, ?, ?, 1, 0)')
      .run(userId, modelId, version);
    return this.db
      .prepare('SELECT epoch, used FROM user_keys WHERE user_id = ? AND model_id = ? AND model_version = ?')
      .get(userId, modelId, version) as UserKeyState;
  }

  /**
   * Counts `count` decryptions (1 per spam request, B' per topic request)
   * under `epoch`, atomically across sessions and instances: 'rotated' when
   * that epoch is no longer current (the client must fetch the next key); the
   * request that leaves less than `count` still runs, and moves the user to
   * the next epoch. A request that would overrun the budget rotates the key
   * first, so no epoch serves more than `budget` decryptions.
   */
  spendUserKey(
    userId: number,
    modelId: string,
    version: number,
    epoch: number,
    budget: number,
    count = 1,
  ): 'ok' | 'rotated' {
    if (count > budget) throw new Error(`one request needs ${count} decryptions, above the key budget ${budget}`);
    return this.db.transaction((): 'ok' | 'rotated' => {
      const cur = this.userKey(userId, modelId, version);
      if (cur.epoch !== epoch) return 'rotated';
      const rotate =
        'UPDATE user_keys SET epoch = ?, used = ? WHERE user_id = ? AND model_id = ? AND model_version = ?';
      if (cur.used + count > budget) {
        this.db.prepare(rotate).run(epoch + 1, 0, userId, modelId, version);
        return 'rotated';
      }
      const used = cur.used + count;
      // Rotate as soon as the rest cannot serve another request of this size: a
      // client counting its budget (welcome.keyBudget) then reconnects before
      // sending, instead of having ciphertexts refused after they left.
      const exhausted = budget - used < count;
      this.db.prepare(rotate).run(exhausted ? epoch + 1 : epoch, exhausted ? 0 : used, userId, modelId, version);
      return 'ok';
    })();
  }

  /**
   * Records the topic the provider decoded for a claimed message (once: the
   * claim makes it unique); -1 marks an evaluation that named no topic.
   */
  recordTopic(userId: number, messageId: string, modelId: string, version: number, topic: number): void {
    this.db
      .prepare(
        'INSERT INTO topics (user_id, message_id, model_id, model_version, topic, recorded_at) VALUES (?, ?, ?, ?, ?, ?)',
      )
      .run(userId, messageId, modelId, version, topic, Date.now());
  }

  topicOf(userId: number, messageId: string): number | undefined {
    const row = this.db
      .prepare('SELECT topic FROM topics WHERE user_id = ? AND message_id = ? AND topic >= 0')
      .get(userId, messageId) as { topic: number } | undefined;
    return row?.topic;
  }

  /** How many messages got each topic, per model version (what the provider's analytics see). */
  topicCounts(): { modelId: string; version: number; topic: number; count: number }[] {
    return this.db
      .prepare(
        'SELECT model_id AS modelId, model_version AS version, topic, COUNT(*) AS count FROM topics WHERE topic >= 0 GROUP BY model_id, model_version, topic ORDER BY model_id, model_version, count DESC, topic',
      )
      .all() as { modelId: string; version: number; topic: number; count: number }[];
  }

  /** One user's recorded topics, oldest first. */
  topicHistory(userId: number): { messageId: string; modelId: string; version: number; topic: number; at: number }[] {
    return this.db
      .prepare(
        'SELECT message_id AS messageId, model_id AS modelId, model_version AS version, topic, recorded_at AS at FROM topics WHERE user_id = ? AND topic >= 0 ORDER BY recorded_at, message_id',
      )
      .all(userId) as { messageId: string; modelId: string; version: number; topic: number; at: number }[];
  }

  /** The user's topic opt-out (docs/protocol.md#topic-extraction): visible to the provider by design. */
  setTopicOptOut(userId: number, optOut: boolean): void {
    this.db
      .prepare(
        'INSERT INTO topic_settings (user_id, opted_out, updated_at) VALUES (?, ?, ?) ON CONFLICT(user_id) DO UPDATE SET opted_out = excluded.opted_out, updated_at = excluded.updated_at',
      )
      .run(userId, optOut ? 1 : 0, Date.now());
  }

  topicOptOut(userId: number): boolean {
    const row = this.db.prepare('SELECT opted_out FROM topic_settings WHERE user_id = ?').get(userId) as
      { opted_out: number } | undefined;
    return row?.opted_out === 1;
  }
}
