// Messages between content scripts / pages and the background. The background
// is the only place holding unlocked keys; pages and content scripts ask it.
import type { DecryptResult } from './decrypt.js';
import type { PgpBlock } from './pgp-message.js';

/** Where a decrypted message lives, for the search index and its links. */
export interface MailSource {
  /** Stable per mailbox: adapter name + message id. */
  id: string;
  url: string;
  from: string;
  to?: string;
  subject: string;
  date: string;
}

export type Request =
  /** indexOnly: for mailbox indexing; no viewer frame will ask for the text. */
  | { type: 'decrypt'; block: PgpBlock; source: MailSource; indexOnly?: boolean }
  | { type: 'unlock'; passphrase: string }
  | { type: 'lock' }
  | { type: 'status' }
  | { type: 'view'; viewId: string }
  | { type: 'keys-changed'; deleted?: string[] }
  | { type: 'tb-displayed-message'; tabId: number };

export interface Status {
  privateKeys: number;
  unlocked: number;
  /** Epoch ms when the first unlocked key is forgotten. */
  expiresAt?: number;
  unlockMinutes: number;
}

/**
 * What a content script gets back: the badge information only. The plaintext
 * stays in the extension and is shown by an extension frame (viewer.html)
 * that the webmail page cannot read.
 */
export type BadgeInfo = Omit<DecryptResult, 'text' | 'subject' | 'attachments'> & { viewId?: string };

export type Reply<T> = { ok: true; value: T } | { ok: false; error: string; code?: string };

/** runtime.connect() port name for indexing all Thunderbird mail with progress. */
export const TB_INDEX_PORT = 'pmf-tb-index';

/** Broadcast to content scripts when keys were unlocked, locked or changed. */
export const KEYS_CHANGED = { type: 'pmf-keys-changed' } as const;

export function isRequest(x: unknown): x is Request {
  return typeof x === 'object' && x !== null && typeof (x as { type?: unknown }).type === 'string';
}

export type { DecryptResult };
