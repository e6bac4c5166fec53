// Delivered messages per user: ids and sizes, which the protocols need, and
// the raw (still encrypted) MIME with its outer headers only for the demo
// webmail, for a retention period.
import { first, type SqlDriver } from './store-driver.js';

/** The demo webmail's folders. */
export type Folder = 'inbox' | 'junk';

export const MESSAGE_ID_MAX = 256;

/** How a delivery is registered. */
export interface DeliverOptions {
  /**
   * Keep the raw message and its outer From/Subject/Date, for the demo
   * webmail (until pruneBodies drops them). Without: the id and size only,
   * all the protocols need when a mail store such as Dovecot holds the mail.
   */
  keepBody?: boolean;
  /**
   * A message already delivered under this id is left as it is, not an
   * error: the LMTP stage's retries (and stages sharing the store) register
   * the same delivery more than once, possibly at the same time.
   */
  once?: boolean;
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

/** What `messages.raw` holds when no body is kept. */
const NO_BODY = Buffer.alloc(0);

/** A row when the message was delivered to the user (Mailbox.isDelivered). */
export const DELIVERED = 'SELECT 1 AS x FROM messages WHERE user_id = ? AND message_id = ?';

export class Mailbox {
  constructor(private readonly db: SqlDriver) {}

  /**
   * Registers a delivered message (raw MIME, usually OpenPGP-encrypted) for a
   * user: its id and size, and with `keepBody` (the default, for the demo
   * webmail and its tests) the message itself.
   */
  async deliver(
    userId: number,
    messageId: string,
    rawMime: string | Uint8Array,
    { keepBody = true, once = false }: DeliverOptions = {},
  ): Promise<void> {
    if (typeof messageId !== 'string' || messageId.length === 0 || Buffer.byteLength(messageId) > MESSAGE_ID_MAX) {
      throw new Error(`message id must be 1..${MESSAGE_ID_MAX} bytes`);
    }
    const raw = typeof rawMime === 'string' ? Buffer.from(rawMime, 'utf8') : Buffer.from(rawMime);
    const h = keepBody ? outerHeaders(raw.toString('utf8')) : { from: '', subject: '', date: '' };
    try {
      await this.db.run(
        `INSERT INTO messages (user_id, message_id, raw, bytes, from_addr, subject, date, delivered_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)${once ? ' ON CONFLICT (user_id, message_id) DO NOTHING' : ''}`,
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
    const row = await first<{ raw: Buffer; bytes: number }>(
      this.db,
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

  async isDelivered(userId: number, messageId: string): Promise<boolean> {
    return (await first(this.db, DELIVERED, [userId, messageId])) !== undefined;
  }
}
