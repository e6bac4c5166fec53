// Messages between content scripts / pages and the background. The background
// is the only place holding unlocked keys; pages and content scripts ask it.
import type { DecryptResult } from './decrypt.js';
import type { PgpBlock } from '../../mail/pgp.js';
import type { SecurityBackground } from './security-background.js';
import { PROVIDER_ID } from '../../mail/message-id.js';

/** Where a decrypted message lives, for the search index and its links. */
export interface MailSource {
  /** Stable per mailbox: adapter name + message id. */
  id: string;
  url: string;
  from: string;
  to?: string;
  subject: string;
  date: string;
  /**
   * The id the provider assigned at delivery (X-PMF-Message-Id), read from the raw message on the
   * webmail's server (Roundcube); the private spam check asks about this id.
   */
  providerId?: string;
}

export type Request =
  /** indexOnly: for mailbox indexing; no viewer frame will ask for the text. */
  | { type: 'decrypt'; block: PgpBlock; source: MailSource; indexOnly?: boolean }
  | { type: 'unlock'; passphrase: string }
  | { type: 'lock' }
  | { type: 'status' }
  /** From the viewer frame: the outcome to show (ViewContent), once. */
  | { type: 'view'; viewId: string }
  /** From the viewer frame: its content's height, for the frame's box (relayed rounded, lib/viewer-height.ts). */
  | { type: 'viewer-height'; viewId: string; height: number }
  | { type: 'keys-changed'; deleted?: string[] }
  | { type: 'tb-displayed-message'; tabId: number }
  /** From the message display script: the message shown in its own tab. */
  | { type: 'tb-this-message' }
  /** Opens the settings page at its unlock form (a banner's Unlock button). */
  | { type: 'open-unlock' }
  /**
   * From a webmail list: the listed messages (MailSource ids) whose subject the list hides ("...");
   * answered with a view id per message the index has a protected subject for (shown by viewer.html).
   */
  | { type: 'list-subjects'; ids: string[] }
  /** A message page of the asking tab's webmail, for mailbox indexing (background/page-fetch.ts). */
  | { type: 'fetch-page'; url: string }
  /** From the options page: adds or removes a webmail site (lib/webmail-sites.ts); answers the list. */
  | { type: 'webmail-sites'; add?: string; remove?: string };

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
export type BadgeInfo = Omit<DecryptResult, 'text' | 'subject' | 'attachments' | 'plaintext'> & { viewId?: string };

/** What a viewer frame shows: the outcome, on the user's security background. */
export interface ViewContent {
  result: DecryptResult;
  security: SecurityBackground;
}

/** Background → the content script whose view it is: the viewer frame's height, rounded. */
export const VIEWER_HEIGHT = 'pmf-viewer-height';
export interface ViewerHeightMessage {
  type: typeof VIEWER_HEIGHT;
  viewId: string;
  height: number;
}

/** error is in plain words (lib/plain-error.ts); detail is the technical text, if any. */
export type Reply<T> = { ok: true; value: T } | { ok: false; error: string; code?: string; detail?: string };

/** runtime.connect() port name for indexing all Thunderbird mail with progress. */
export const TB_INDEX_PORT = 'pmf-tb-index';

/** At most this many listed messages per list-subjects request (a webmail page lists 50 or so). */
export const MAX_LISTED = 200;

/** Broadcast to content scripts when keys were unlocked, locked or changed. */
export const KEYS_CHANGED = { type: 'pmf-keys-changed' } as const;

const MAX_FIELD_CHARS = 4096;

/**
 * Checks a decrypt request's shape: content scripts build it from page
 * content, so it is untrusted input. Throws a clear error; returns it typed.
 */
export function validateDecryptRequest(req: { block?: unknown; source?: unknown }): {
  block: PgpBlock;
  source: MailSource;
} {
  const b = req.block as Partial<PgpBlock> | undefined;
  if (
    !b ||
    (b.kind !== 'encrypted' && b.kind !== 'cleartext-signed') ||
    typeof b.armored !== 'string' ||
    typeof b.pgpMime !== 'boolean'
  ) {
    throw new Error('Invalid decrypt request: bad block.');
  }
  const s = req.source as Partial<MailSource> | undefined;
  const text = (v: unknown, optional = false) =>
    (optional && v === undefined) || (typeof v === 'string' && v.length <= MAX_FIELD_CHARS);
  if (!s || !text(s.id) || !text(s.url) || !text(s.from) || !text(s.subject) || !text(s.date) || !text(s.to, true)) {
    throw new Error('Invalid decrypt request: bad message metadata.');
  }
  if (s.providerId !== undefined && !(typeof s.providerId === 'string' && PROVIDER_ID.test(s.providerId)))
    throw new Error('Invalid decrypt request: bad provider message id.');
  let url: URL;
  try {
    url = new URL(s.url!);
  } catch {
    throw new Error('Invalid decrypt request: bad message URL.');
  }
  if (!['http:', 'https:', 'mid:'].includes(url.protocol)) throw new Error('Invalid decrypt request: bad message URL.');
  return {
    block: { kind: b.kind, armored: b.armored, pgpMime: b.pgpMime },
    source: {
      id: s.id!,
      url: s.url!,
      from: s.from!,
      to: s.to,
      subject: s.subject!,
      date: s.date!,
      ...(s.providerId ? { providerId: s.providerId } : {}),
    },
  };
}

export function isRequest(x: unknown): x is Request {
  return typeof x === 'object' && x !== null && typeof (x as { type?: unknown }).type === 'string';
}

export type { DecryptResult };
