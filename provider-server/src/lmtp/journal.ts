// The LMTP stage's delivery journal: which provider id a delivery attempt
// got and whether Dovecot accepted it, so that an MTA retrying the same
// message (after a crash, a timeout or a lost reply) gets the same id and is
// not delivered twice. SQLite beside the store, one stage process per file.
import Database from 'better-sqlite3';
import { createHash, randomBytes } from 'node:crypto';

/** Long enough to outlive any MTA retry (Postfix gives up after 5 days by default). */
const KEEP_MS = 7 * 24 * 3600_000;

export interface JournalEntry {
  /** The provider-assigned id (mail/message-id.ts PROVIDER_ID). */
  id: string;
  /** Dovecot accepted this delivery. */
  relayed: boolean;
  /** Made just now: no earlier attempt can have reached Dovecot. */
  fresh: boolean;
}

/**
 * One delivery: the recipient and the message exactly as the MTA sent it.
 * A retry of the same queued message has the same bytes, trace headers
 * included; a new message (even a resent copy) has a new Received line from
 * the MTA, so it is a new delivery.
 */
export function deliveryKey(recipient: string, raw: Buffer): Buffer {
  return createHash('sha256').update(recipient.toLowerCase()).update('\0').update(raw).digest();
}

export class DeliveryJournal {
  private readonly db: Database.Database;

  constructor(file: string) {
    this.db = new Database(file);
    this.db.pragma('journal_mode = WAL');
    this.db.pragma('synchronous = FULL'); // an id handed out must survive a crash
    this.db.exec(`CREATE TABLE IF NOT EXISTS deliveries (
      key BLOB PRIMARY KEY,
      message_id TEXT NOT NULL UNIQUE,
      relayed INTEGER NOT NULL,
      created_at INTEGER NOT NULL
    )`);
    this.prune();
  }

  /** The entry for `key`, made with a fresh id if there is none. */
  begin(key: Buffer): JournalEntry {
    const id = `pmf-${randomBytes(16).toString('hex')}`;
    const fresh =
      this.db
        .prepare('INSERT OR IGNORE INTO deliveries (key, message_id, relayed, created_at) VALUES (?, ?, 0, ?)')
        .run(key, id, Date.now()).changes === 1;
    const row = this.db.prepare('SELECT message_id, relayed FROM deliveries WHERE key = ?').get(key) as {
      message_id: string;
      relayed: number;
    };
    return { id: row.message_id, relayed: row.relayed === 1, fresh };
  }

  markRelayed(key: Buffer): void {
    this.db.prepare('UPDATE deliveries SET relayed = 1 WHERE key = ?').run(key);
  }

  /** A delivery refused for good: a later identical one starts afresh. */
  forget(key: Buffer): void {
    this.db.prepare('DELETE FROM deliveries WHERE key = ?').run(key);
  }

  prune(now = Date.now()): void {
    this.db.prepare('DELETE FROM deliveries WHERE created_at < ?').run(now - KEEP_MS);
  }

  close(): void {
    this.db.close();
  }
}
