// The provider's only state (docs/protocol.md#provider-state: sessions are stateless apart from
// this): users and their bearer tokens (stored as SHA-256 only), the registry
// of delivered messages per user (ids and sizes; the raw, still-encrypted
// MIME only for the demo webmail, for a retention period), the
// claims on classified message ids with the recorded answer
// (docs/protocol.md#exactly-once-verdicts), the per-user rate-limit windows and
// the key epochs of each account's key salt (kept after the account is deleted). Everything several provider instances must agree on lives
// here. One class over two SQL databases (store-sqlite.ts, the embedded
// default, and store-postgres.ts, shared by several instances): every
// statement below is portable and atomic on its own, so no operation needs a
// multi-statement transaction and none can interleave badly across instances.
import { randomBytes } from 'node:crypto';
import { ConnectionWindows } from './connection-gate.js';
import { LIMIT_DEFAULTS } from './limits.js';
import { MessageRates } from './message-rate.js';
import { observedDriver, type StatementObserver } from './store-observer.js';
import { Tokens, type TokenKind, type TokenPolicy } from './tokens.js';

/**
 * When a write resolves. `durable` (the default): once its commit is on disk.
 * `committed`: once committed, visible to every later statement and instance,
 * and on disk with the next durable commit at the latest (a database log is
 * written in commit order). Only for writes whose loss in an OS crash leaves
 * nothing wrong behind: nothing that depends on them leaves the provider
 * before a durable write that follows them, `Store.recordAnswer`.
 */
export type Durability = 'durable' | 'committed';

/** What the store needs from a database: `?` placeholders, rows as objects. */
export interface SqlDriver {
  /** Rows of a query (or of a statement with RETURNING). */
  all<T>(sql: string, params?: unknown[], durability?: Durability): Promise<T[]>;
  /** Runs a statement; resolves to the number of rows it changed. */
  run(sql: string, params?: unknown[], durability?: Durability): Promise<number>;
  /**
   * Resolves once every commit made so far is on disk: what a reader sends
   * on must not be lost to an OS crash, even if it read the commit of a
   * write that is still waiting for its sync.
   */
  durable(): Promise<void>;
  /** Which constraint a failed statement broke, if that is why it failed. */
  violated(e: unknown): 'unique' | 'foreign_key' | undefined;
  schemaVersion(): Promise<number>;
  close(): Promise<void>;
}

/** The demo webmail's folders. */
export type Folder = 'inbox' | 'junk';

/**
 * Per-user counts in fixed windows, each kind apart: requests (spam, topics,
 * link checks, OT) and hellos per minute, blocklist OPRF evaluations and new
 * messages per UTC day (docs/blocklist.md#daily-cap, message-rate.ts).
 */
const WINDOWS = {
  requests: { table: 'rate_windows', ms: 60_000 },
  hello: { table: 'hello_windows', ms: 60_000 },
  oprf: { table: 'oprf_windows', ms: 86_400_000 },
  messages: { table: 'message_windows', ms: 86_400_000 },
  index: { table: 'ri_windows', ms: 60_000 }, // remote index requests (remote-index/http.ts)
} as const;

export type RateKind = keyof typeof WINDOWS;

/** When the window of `kind` that holds `now` ends (ms): a refused client may ask again then. */
export function windowEnd(kind: RateKind, now = Date.now()): number {
  const { ms } = WINDOWS[kind];
  return (Math.floor(now / ms) + 1) * ms;
}

/** A user's key epoch for one model version and how many decryptions it has served. */
export interface UserKeyState {
  /** The account's key salt: with the epoch, what its user key is derived from (UserKeyId). */
  salt: Buffer;
  epoch: number;
  used: number;
}

/** Bytes of an account's key salt. */
export const KEY_SALT_BYTES = 32;

/**
 * A fresh account key salt from the CSPRNG: user keys are derived from it,
 * never from the numeric id, so no account ever derives another's key, past
 * or present (docs/security.md#deleted-accounts).
 */
export const newKeySalt = (): Buffer => randomBytes(KEY_SALT_BYTES);

export const MESSAGE_ID_MAX = 256;

export type Task = 'spam' | 'topics' | 'blocklist';

/**
 * A claim: `attempt` identifies this computation; only the attempt that is
 * still current may record its answer (another request may take over a claim
 * whose answer was never recorded, e.g. after a crash).
 */
export type ClaimResult = { attempt: Buffer } | 'unknown_message' | 'already_classified';

/** What a re-sent request finds: the recorded answer, or why there is none. */
export type RecordedAnswer = { answer: Buffer } | 'unknown_message' | 'already_classified' | 'not_answered';

/** How a delivery is registered. */
export interface DeliverOptions {
  /**
   * Keep the raw message and its outer From/Subject/Date, for the demo
   * webmail (until pruneBodies drops them). Without: the id and size only,
   * all the protocols need when a mail store such as Dovecot holds the mail.
   */
  keepBody?: boolean;
}

export interface MessageSummary {
  id: string;
  from: string;
  subject: string;
  date: string;
  folder: Folder;
}

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

const CLAIM_KEY = 'user_id = ? AND message_id = ? AND task = ?';

const DEFAULT_TOKEN_POLICY: TokenPolicy = {
  lifetimeMs: LIMIT_DEFAULTS.tokenLifetimeMs,
  perUser: LIMIT_DEFAULTS.tokensPerUser,
};

/** What `messages.raw` holds when no body is kept. */
const NO_BODY = Buffer.alloc(0);

/**
 * The per-request bookkeeping before and after an answer (rate windows,
 * claims, key budgets, releases, acknowledgements) resolves once committed:
 * the answer's durable record follows it in the log, so an OS crash can only
 * lose such writes for requests whose answer never left (and acknowledgements,
 * whose loss keeps an answer until it is pruned). See docs/protocol.md#exactly-once-verdicts.
 */
const BOOKKEEPING: Durability = 'committed';

/**
 * A claim's attempt id: random, so that claimers on other instances never
 * collide; only the provider ever sees it. Drawn from the CSPRNG 256 at a
 * time: one randomBytes call per claim cost about 2 % of the event loop
 * under load.
 */
const ATTEMPT_BYTES = 16;
let attempts = Buffer.alloc(0);
function newAttempt(): Buffer {
  if (attempts.length < ATTEMPT_BYTES) attempts = randomBytes(256 * ATTEMPT_BYTES);
  const attempt = Buffer.from(attempts.subarray(0, ATTEMPT_BYTES));
  attempts = attempts.subarray(ATTEMPT_BYTES);
  return attempt;
}

export class Store {
  /**
   * Per kind, the window (takeRate) whose users' past windows this process
   * has dropped, and those users: each user's are dropped once a window,
   * not at every request. Only the current window's users are kept.
   */
  private readonly pruned = new Map<RateKind, { window: number; users: Set<number> }>();

  /** Bearer tokens: issued, checked, listed, revoked (tokens.ts). */
  readonly tokens: Tokens;
  /** New connections per address and network, shared by instances (connection-gate.ts). */
  readonly connections: ConnectionWindows;
  /** What the per-user rate counts per delivered message and key salt (message-rate.ts). */
  readonly messageRates: MessageRates;
  private observer: StatementObserver | undefined;
  private readonly db: SqlDriver;

  constructor(driver: SqlDriver) {
    // One observed driver for every statement, the tokens' and connection windows' too (observe).
    this.db = observedDriver(driver, (statement, seconds, failed) => this.observer?.(statement, seconds, failed));
    this.tokens = new Tokens(this.db);
    this.connections = new ConnectionWindows(this.db);
    this.messageRates = new MessageRates(this.db);
  }

  /** Reports every statement's time and failures from now on (metrics). */
  observe(observer: StatementObserver): void {
    this.observer = observer;
  }

  schemaVersion(): Promise<number> {
    return this.db.schemaVersion();
  }

  /** The database, for a feature that keeps tables of its own (remote-index/store.ts). */
  sql(): SqlDriver {
    return this.db;
  }

  close(): Promise<void> {
    return this.db.close();
  }

  private async get<T>(sql: string, params: unknown[]): Promise<T | undefined> {
    return (await this.db.all<T>(sql, params))[0];
  }

  /**
   * The health check's round trip: writes this instance's row, durably, and
   * reads it back. Fails when the store cannot take a write (a full disk, a
   * failed WAL sync, a PostgreSQL that is down or read-only).
   */
  async probe(instance: string): Promise<void> {
    const at = Date.now();
    await this.db.run(
      'INSERT INTO health_probes (instance, probed_at) VALUES (?, ?) ON CONFLICT (instance) DO UPDATE SET probed_at = excluded.probed_at',
      [instance, at],
    );
    const row = await this.get<{ probed_at: number }>('SELECT probed_at FROM health_probes WHERE instance = ?', [
      instance,
    ]);
    if (row?.probed_at !== at) throw new Error('the store did not read back what was just written');
  }

  /** Creates a user and returns a fresh bearer token (shown once, stored hashed). */
  async addUser(name: string, policy = DEFAULT_TOKEN_POLICY): Promise<{ userId: number; token: string }> {
    if (!/^[A-Za-z0-9._@+-]{1,128}$/.test(name)) throw new Error('user name must match [A-Za-z0-9._@+-]{1,128}');
    let row: { id: number } | undefined;
    try {
      row = await this.get<{ id: number }>(
        'INSERT INTO users (name, created_at, key_salt) VALUES (?, ?, ?) RETURNING id',
        [name, Date.now(), newKeySalt()],
      );
    } catch (e) {
      if (this.db.violated(e) === 'unique') throw new Error(`user ${name} already exists`);
      throw e;
    }
    const userId = Number(row!.id);
    return { userId, token: await this.tokens.issue(userId, 'cli', policy) };
  }

  /** The user's id, creating the user (without a token) when there is none by that name: a first sign-in. */
  async ensureUser(name: string): Promise<number> {
    if (!/^[A-Za-z0-9._@+-]{1,128}$/.test(name)) throw new Error('user name must match [A-Za-z0-9._@+-]{1,128}');
    await this.db.run('INSERT INTO users (name, created_at, key_salt) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING', [
      name,
      Date.now(),
      newKeySalt(),
    ]);
    return (await this.userId(name))!;
  }

  async userId(name: string): Promise<number | undefined> {
    const row = await this.get<{ id: number }>('SELECT id FROM users WHERE name = ?', [name]);
    return row?.id;
  }

  /**
   * Deletes an account: its tokens, delivered messages, claims, recorded
   * answers, topics and settings, and its rate windows. Its key epochs stay
   * (they belong to its key salt, which no other account gets): an account
   * restored from a backup goes on from its epoch, and no new account starts
   * a fresh budget on a key that leaked. Returns the deleted id, or undefined
   * when there is no such user.
   */
  async deleteUser(name: string): Promise<number | undefined> {
    const row = await this.get<{ id: number }>('DELETE FROM users WHERE name = ? RETURNING id', [name]);
    if (!row) return undefined;
    const id = Number(row.id);
    // Ids are never handed out again; this only frees the rows.
    for (const { table } of Object.values(WINDOWS)) await this.db.run(`DELETE FROM ${table} WHERE user_id = ?`, [id]);
    return id;
  }

  /** A fresh bearer token for the user (tokens.ts); the policy defaults to the default limits. */
  issueToken(userId: number, kind: TokenKind = 'cli', policy: TokenPolicy = DEFAULT_TOKEN_POLICY): Promise<string> {
    return this.tokens.issue(userId, kind, policy);
  }

  revokeToken(token: string): Promise<void> {
    return this.tokens.revokeToken(token);
  }

  /** The user a live bearer token belongs to (tokens.ts), or undefined. */
  async authenticate(token: string, policy: TokenPolicy = DEFAULT_TOKEN_POLICY): Promise<number | undefined> {
    const found = await this.tokens.authenticate(token, policy);
    return typeof found === 'object' ? found.userId : undefined;
  }

  /**
   * Registers a delivered message (raw MIME, usually OpenPGP-encrypted) for a
   * user: its id and size, and with `keepBody` (the default, for the demo
   * webmail and its tests) the message itself.
   */
  async deliver(
    userId: number,
    messageId: string,
    rawMime: string | Uint8Array,
    { keepBody = true }: DeliverOptions = {},
  ): Promise<void> {
    if (typeof messageId !== 'string' || messageId.length === 0 || Buffer.byteLength(messageId) > MESSAGE_ID_MAX) {
      throw new Error(`message id must be 1..${MESSAGE_ID_MAX} bytes`);
    }
    const raw = typeof rawMime === 'string' ? Buffer.from(rawMime, 'utf8') : Buffer.from(rawMime);
    const h = keepBody ? outerHeaders(raw.toString('utf8')) : { from: '', subject: '', date: '' };
    try {
      await this.db.run(
        'INSERT INTO messages (user_id, message_id, raw, bytes, from_addr, subject, date, delivered_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
        [userId, messageId, keepBody ? raw : NO_BODY, raw.length, h.from, h.subject, h.date, Date.now()],
      );
    } catch (e) {
      const broke = this.db.violated(e);
      if (broke === 'unique') throw new Error(`message ${messageId} was already delivered to this user`);
      if (broke === 'foreign_key') throw new Error(`user ${userId} does not exist`);
      throw e;
    }
  }

  listMessages(userId: number, folder?: Folder): Promise<MessageSummary[]> {
    return this.db.all<MessageSummary>(
      'SELECT message_id AS id, from_addr AS "from", subject, date, folder FROM messages WHERE user_id = ? AND (CAST(? AS TEXT) IS NULL OR folder = ?) ORDER BY delivered_at, message_id',
      [userId, folder ?? null, folder ?? null],
    );
  }

  /** Moves a message to a folder; false if this user has no such message. */
  async moveMessage(userId: number, messageId: string, folder: Folder): Promise<boolean> {
    const changed = await this.db.run('UPDATE messages SET folder = ? WHERE user_id = ? AND message_id = ?', [
      folder,
      userId,
      messageId,
    ]);
    return changed === 1;
  }

  /** A delivered message: its size, and its raw MIME while kept (DeliverOptions, pruneBodies). */
  async getMessage(userId: number, messageId: string): Promise<{ raw?: string; bytes: number } | undefined> {
    const row = await this.get<{ raw: Buffer; bytes: number }>(
      'SELECT raw, bytes FROM messages WHERE user_id = ? AND message_id = ?',
      [userId, messageId],
    );
    if (!row) return undefined;
    return row.raw.length > 0 ? { raw: Buffer.from(row.raw).toString('utf8'), bytes: row.bytes } : { bytes: row.bytes };
  }

  /**
   * Drops the kept bodies (and outer headers stay) of messages delivered
   * before `before` (ms): the ids, sizes and claims stay, so the messages
   * can still be classified, at most once. Returns how many were dropped.
   */
  pruneBodies(before: number): Promise<number> {
    return this.db.run('UPDATE messages SET raw = ? WHERE length(raw) > 0 AND delivered_at < ?', [NO_BODY, before]);
  }

  /**
   * Claims `messageId` for `task` and binds the claim to `request` (the
   * SHA-256 of the request). Refuses ids never delivered to this user and
   * claims whose answer was recorded (docs/protocol.md#exactly-once-verdicts);
   * a claim whose answer was never recorded left nothing with the client, so
   * a new request takes it over and the earlier computation can no longer
   * record (nor send) its answer.
   */
  async claim(userId: number, messageId: string, task: Task, request: Uint8Array): Promise<ClaimResult> {
    const attempt = newAttempt();
    const req = Buffer.from(request);
    // A claim released between the two statements is simply tried again.
    for (let tries = 0; tries < 3; tries++) {
      const inserted = await this.db.all(
        'INSERT INTO classified (user_id, message_id, task, classified_at, request_sha256, attempt) SELECT ?, ?, ?, ?, ?, ? WHERE EXISTS (SELECT 1 FROM messages WHERE user_id = ? AND message_id = ?) ON CONFLICT DO NOTHING RETURNING attempt',
        [userId, messageId, task, Date.now(), req, attempt, userId, messageId],
        BOOKKEEPING,
      );
      if (inserted.length === 1) return { attempt };
      const taken = await this.db.run(
        `UPDATE classified SET attempt = ?, request_sha256 = ?, classified_at = ? WHERE ${CLAIM_KEY} AND attempt IS NOT NULL`,
        [attempt, req, Date.now(), userId, messageId, task],
        BOOKKEEPING,
      );
      if (taken === 1) return { attempt };
      if (await this.isClassified(userId, messageId, task)) return 'already_classified';
      if (!(await this.isDelivered(userId, messageId))) return 'unknown_message';
    }
    return 'already_classified';
  }

  async isDelivered(userId: number, messageId: string): Promise<boolean> {
    const row = await this.get('SELECT 1 AS x FROM messages WHERE user_id = ? AND message_id = ?', [userId, messageId]);
    return row !== undefined;
  }

  /**
   * Records the answer of the claim's current `attempt` before it is sent,
   * durably (SQLite: the WAL synced after the commit, PostgreSQL
   * synchronous_commit), and with it every bookkeeping write before it; `null`
   * records that an answer left without keeping it (nothing to replay). False:
   * another request took the claim over, and this answer must not be sent.
   */
  async recordAnswer(
    userId: number,
    messageId: string,
    task: Task,
    attempt: Buffer,
    answer: Uint8Array | null,
  ): Promise<boolean> {
    const changed = await this.db.run(
      `UPDATE classified SET answer = ?, attempt = NULL WHERE ${CLAIM_KEY} AND attempt = ?`,
      [answer === null ? null : Buffer.from(answer), userId, messageId, task, attempt],
    );
    return changed === 1;
  }

  /** The recorded answer to exactly this request (same user, message and request hash). */
  async recordedAnswer(userId: number, messageId: string, task: Task, request: Uint8Array): Promise<RecordedAnswer> {
    const row = await this.get<{ request_sha256: Buffer | null; attempt: Buffer | null; answer: Buffer | null }>(
      `SELECT request_sha256, attempt, answer FROM classified WHERE ${CLAIM_KEY}`,
      [userId, messageId, task],
    );
    if (!row) return (await this.isDelivered(userId, messageId)) ? 'not_answered' : 'unknown_message';
    if (row.attempt !== null) return 'not_answered';
    const same = row.request_sha256 !== null && Buffer.from(row.request_sha256).equals(Buffer.from(request));
    if (!same || row.answer === null) return 'already_classified';
    await this.db.durable(); // it is sent again: its record must be on disk, as before the first send
    return { answer: Buffer.from(row.answer) };
  }

  /** Whether an answer to exactly this request (same user, message and request hash) has left the provider. */
  async answered(userId: number, messageId: string, task: Task, request: Uint8Array): Promise<boolean> {
    const row = await this.get<{ request_sha256: Buffer | null }>(
      `SELECT request_sha256 FROM classified WHERE ${CLAIM_KEY} AND attempt IS NULL`,
      [userId, messageId, task],
    );
    if (row?.request_sha256 == null || !Buffer.from(row.request_sha256).equals(Buffer.from(request))) return false;
    await this.db.durable(); // as in recordedAnswer: the caller answers again
    return true;
  }

  /** The client confirmed it has the answer: the recorded copy is dropped (the claim stays). */
  async acknowledge(userId: number, messageId: string, task: Task, request: Uint8Array): Promise<void> {
    await this.db.run(
      `UPDATE classified SET answer = NULL WHERE ${CLAIM_KEY} AND request_sha256 = ?`,
      [userId, messageId, task, Buffer.from(request)],
      BOOKKEEPING,
    );
  }

  /**
   * Drops the recorded answers of claims made before `before` (ms) that were
   * never acknowledged; the claims stay, so a later spam_resend is
   * already_classified. Returns how many were dropped.
   */
  async pruneAnswers(before: number): Promise<number> {
    return this.db.run(
      'UPDATE classified SET answer = NULL WHERE answer IS NOT NULL AND attempt IS NULL AND classified_at < ?',
      [before],
    );
  }

  /**
   * Keeps at most the `keep` newest recorded answers of a user that were
   * never acknowledged and drops the older ones (their claims stay, like
   * pruneAnswers): a client that asks and never acknowledges grows the store
   * by at most `keep` answers, not by one per delivered message. Answers
   * recorded in the same millisecond as the keep-th newest all stay, and on
   * PostgreSQL one recorded concurrently may be counted by the next cap only.
   */
  async capAnswers(userId: number, keep: number): Promise<number> {
    return this.db.run(
      `UPDATE classified SET answer = NULL
        WHERE user_id = ? AND answer IS NOT NULL AND attempt IS NULL AND classified_at < (
          SELECT classified_at FROM classified WHERE user_id = ? AND answer IS NOT NULL
           ORDER BY classified_at DESC LIMIT 1 OFFSET ?)`,
      [userId, userId, keep - 1],
      BOOKKEEPING, // lost in an OS crash, it leaves only answers that the next cap drops
    );
  }

  /**
   * Undoes a claim when its attempt failed before any answer left the
   * provider (the client learnt nothing), so the message can be classified again.
   */
  async releaseClaim(userId: number, messageId: string, task: Task, attempt: Buffer): Promise<void> {
    await this.db.run(
      `DELETE FROM classified WHERE ${CLAIM_KEY} AND attempt = ?`,
      [userId, messageId, task, attempt],
      BOOKKEEPING,
    );
  }

  /** Whether an answer for this message left (or may have left) the provider. */
  async isClassified(userId: number, messageId: string, task: Task = 'spam'): Promise<boolean> {
    const row = await this.get(`SELECT 1 AS x FROM classified WHERE ${CLAIM_KEY} AND attempt IS NULL`, [
      userId,
      messageId,
      task,
    ]);
    return row !== undefined;
  }

  /**
   * Counts `amount` (one request, or a request's OPRF evaluations) against
   * the user's current fixed window of `kind`; false when it would pass
   * `limit` (the request must then be refused, and nothing is counted). One
   * statement, so instances sharing the store count together; the first of
   * a window also drops the user's past windows.
   */
  async takeRate(
    userId: number,
    limit: number,
    now = Date.now(),
    kind: RateKind = 'requests',
    amount = 1,
  ): Promise<boolean> {
    const { table, ms } = WINDOWS[kind];
    const window = Math.floor(now / ms) * ms;
    if (amount > limit) return false;
    let pruned = this.pruned.get(kind);
    if (pruned?.window !== window) this.pruned.set(kind, (pruned = { window, users: new Set() }));
    const prune = !pruned.users.has(userId);
    if (prune) pruned.users.add(userId);
    // Both at once (one commit in SQLite): dropping past windows never touches the current one.
    const [, counted] = await Promise.all([
      prune &&
        this.db.run(`DELETE FROM ${table} WHERE user_id = ? AND window_start < ?`, [userId, window], BOOKKEEPING),
      this.db.all(
        `INSERT INTO ${table} (user_id, window_start, count) VALUES (?, ?, ?) ON CONFLICT (user_id, window_start) DO UPDATE SET count = ${table}.count + ? WHERE ${table}.count + ? <= ? RETURNING count`,
        [userId, window, amount, amount, amount, limit],
        BOOKKEEPING,
      ),
    ]);
    return counted.length === 1;
  }

  /**
   * The user's key salt and current key epoch for a model version (epoch 1
   * when its salt first serves it); undefined when the account is gone.
   */
  async userKey(userId: number, modelId: string, version: number): Promise<UserKeyState | undefined> {
    await this.db.run(
      'INSERT INTO key_epochs (key_salt, model_id, model_version, epoch, used) SELECT key_salt, ?, ?, 1, 0 FROM users WHERE id = ? ON CONFLICT DO NOTHING',
      [modelId, version, userId],
      BOOKKEEPING, // a lost first epoch is made again alike; its key is derived from (salt, epoch)
    );
    const row = await this.get<UserKeyState>(
      'SELECT u.key_salt AS salt, k.epoch, k.used FROM users u JOIN key_epochs k ON k.key_salt = u.key_salt WHERE u.id = ? AND k.model_id = ? AND k.model_version = ?',
      [userId, modelId, version],
    );
    return row && { ...row, salt: Buffer.from(row.salt) };
  }

  /** The current epoch of a key salt for a model version, made (epoch 1) on first use. */
  private async keyEpoch(salt: Uint8Array, modelId: string, version: number): Promise<number> {
    const key = [Buffer.from(salt), modelId, version];
    await this.db.run(
      'INSERT INTO key_epochs (key_salt, model_id, model_version, epoch, used) VALUES (?, ?, ?, 1, 0) ON CONFLICT DO NOTHING',
      key,
      BOOKKEEPING,
    );
    const row = await this.get<{ epoch: number }>(
      'SELECT epoch FROM key_epochs WHERE key_salt = ? AND model_id = ? AND model_version = ?',
      key,
    );
    return row!.epoch;
  }

  /**
   * Counts `count` decryptions (1 per spam request, B' per topic request)
   * under the key of (`salt`, `epoch`), atomically across sessions and
   * instances: 'rotated' when that epoch is no longer current (the client
   * must fetch the next key); the request that leaves less than `count`
   * still runs, and moves the salt to the next epoch. A request that would
   * overrun the budget rotates the key first, so no epoch serves more than
   * `budget` decryptions.
   */
  async spendUserKey(
    salt: Uint8Array,
    modelId: string,
    version: number,
    epoch: number,
    budget: number,
    count = 1,
  ): Promise<'ok' | 'rotated'> {
    if (count > budget) throw new Error(`one request needs ${count} decryptions, above the key budget ${budget}`);
    const key = [Buffer.from(salt), modelId, version, epoch];
    const where = 'WHERE key_salt = ? AND model_id = ? AND model_version = ? AND epoch = ?';
    // Each UPDATE is conditional on the epoch it read, so concurrent spenders
    // (other sessions, other instances) never both use the last decryptions.
    // The common case is one statement: the spend. The salt's row exists once
    // a hello made the key; if not, both UPDATEs miss and keyEpoch below makes it.
    for (;;) {
      // Rotate as soon as the rest cannot serve another request of this size: a
      // client counting its budget (welcome.keyBudget) then reconnects before
      // sending, instead of having ciphertexts refused after they left.
      const spent = await this.db.run(
        `UPDATE key_epochs SET
           epoch = CASE WHEN ? - (used + ?) < ? THEN epoch + 1 ELSE epoch END,
           used = CASE WHEN ? - (used + ?) < ? THEN 0 ELSE used + ? END
         ${where} AND used + ? <= ?`,
        [budget, count, count, budget, count, count, count, ...key, count, budget],
        BOOKKEEPING,
      );
      if (spent === 1) return 'ok';
      const overran = await this.db.run(
        `UPDATE key_epochs SET epoch = epoch + 1, used = 0 ${where} AND used + ? > ?`,
        [...key, count, budget],
        BOOKKEEPING,
      );
      if (overran === 1) return 'rotated';
      if ((await this.keyEpoch(salt, modelId, version)) !== epoch) return 'rotated';
    }
  }

  /**
   * Records the topic the provider decoded for a claimed message (once: the
   * claim makes it unique); -1 marks an evaluation that named no topic.
   */
  /** Records a message's decoded topic once; false when it was already recorded (a labels message decoded again after a crash). */
  async recordTopic(
    userId: number,
    messageId: string,
    modelId: string,
    version: number,
    topic: number,
  ): Promise<boolean> {
    const inserted = await this.db.run(
      'INSERT INTO topics (user_id, message_id, model_id, model_version, topic, recorded_at) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
      [userId, messageId, modelId, version, topic, Date.now()],
    );
    return inserted === 1;
  }

  async topicOf(userId: number, messageId: string): Promise<number | undefined> {
    const row = await this.get<{ topic: number }>(
      'SELECT topic FROM topics WHERE user_id = ? AND message_id = ? AND topic >= 0',
      [userId, messageId],
    );
    return row?.topic;
  }

  /** How many messages got each topic, per model version (what the provider's analytics see). */
  topicCounts(): Promise<{ modelId: string; version: number; topic: number; count: number }[]> {
    return this.db.all(
      'SELECT model_id AS "modelId", model_version AS "version", topic, COUNT(*) AS "count" FROM topics WHERE topic >= 0 GROUP BY model_id, model_version, topic ORDER BY model_id, model_version, "count" DESC, topic',
    );
  }

  /** One user's recorded topics, oldest first. */
  topicHistory(
    userId: number,
  ): Promise<{ messageId: string; modelId: string; version: number; topic: number; at: number }[]> {
    return this.db.all(
      'SELECT message_id AS "messageId", model_id AS "modelId", model_version AS "version", topic, recorded_at AS "at" FROM topics WHERE user_id = ? AND topic >= 0 ORDER BY recorded_at, message_id',
      [userId],
    );
  }

  /** The user's topic opt-out (docs/protocol.md#topic-extraction): visible to the provider by design. */
  async setTopicOptOut(userId: number, optOut: boolean): Promise<void> {
    await this.db.run(
      'INSERT INTO topic_settings (user_id, opted_out, updated_at) VALUES (?, ?, ?) ON CONFLICT (user_id) DO UPDATE SET opted_out = excluded.opted_out, updated_at = excluded.updated_at',
      [userId, optOut ? 1 : 0, Date.now()],
    );
  }

  async topicOptOut(userId: number): Promise<boolean> {
    const row = await this.get<{ opted_out: number }>('SELECT opted_out FROM topic_settings WHERE user_id = ?', [
      userId,
    ]);
    return row?.opted_out === 1;
  }
}
