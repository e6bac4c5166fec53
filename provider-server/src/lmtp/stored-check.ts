// Whether Dovecot already holds a delivery, asked over IMAP as a Dovecot
// master user: closes the one window the journal alone leaves open (Dovecot
// stored the message, then the stage died before its answer arrived), so the
// MTA's retry is acknowledged instead of stored twice. Only asked for a
// retry whose earlier attempt may have reached Dovecot.
import { ImapFlow } from 'imapflow';
import { PROVIDER_ID_HEADER } from '../../../mail/message-id.js';
import { readRegularFile } from '../read-file.js';

export interface StoredCheckConfig {
  /** Dovecot's IMAP listener, on loopback (plain IMAP carries the master password). */
  host: string;
  port: number;
  /** A Dovecot master user (passdb with `master = yes`), logged in as `user*masterUser`. */
  masterUser: string;
  /** File holding its password (mode 0600 or stricter, like the provider's keys). */
  passwordFile: string;
  timeoutMs: number;
}

export type StoredCheck = (user: string, id: string) => Promise<boolean>;

export function storedCheck(c: StoredCheckConfig): StoredCheck {
  const bytes = readRegularFile(c.passwordFile, 'master password file', { noFollow: true }, (st) => {
    if (st.mode & 0o077)
      throw new Error(`master password file ${c.passwordFile} must not be readable by group or others`);
  });
  const pass = Buffer.from(bytes).toString('utf8').trim();
  bytes.fill(0);
  return async (user, id) => {
    const imap = new ImapFlow({
      host: c.host,
      port: c.port,
      secure: false,
      auth: { user: `${user}*${c.masterUser}`, pass },
      logger: false,
      connectionTimeout: c.timeoutMs,
      greetingTimeout: c.timeoutMs,
      socketTimeout: c.timeoutMs,
    });
    await imap.connect();
    try {
      // Every folder: the user may have moved it already.
      for (const box of await imap.list()) {
        if (box.flags.has('\\Noselect')) continue;
        const lock = await imap.getMailboxLock(box.path, { readOnly: true });
        try {
          const hits = await imap.search({ header: { [PROVIDER_ID_HEADER]: id } });
          if (hits && hits.length > 0) return true;
        } finally {
          lock.release();
        }
      }
      return false;
    } finally {
      await imap.logout().catch(() => imap.close());
    }
  };
}
