// A webmail adapter knows one webmail's DOM: where a message view is, its
// metadata, and the element holding its (encrypted) body. Adding support for
// a webmail is one new file implementing this and one line in ./index.ts.
import type { MailSource } from '../../lib/messages.js';

export interface MessageView {
  /** Named at scan time from the page's address, never re-read from the page later (a move goes to this message). */
  source: MailSource;
  /** Element whose text holds the armored OpenPGP content; the extension's box goes before it. */
  body: HTMLElement;
  /** The body text, plus the MIME content type when the page shows it (for pages the background fetched). */
  text: string;
  contentType?: string;
}

export interface WebmailAdapter {
  name: string;
  /** Whether this adapter handles the current page. */
  matches(doc: Document): boolean;
  /**
   * The message views of doc, a page loaded from url (the live page or a fetched one): only the
   * message the address names, where the webmail shows it, never other elements that look like one.
   */
  findMessages(doc: Document, url: URL): MessageView[];
  /**
   * On a mailbox listing page, the URLs of the listed messages (same origin),
   * for indexing the whole mailbox. Omit if the webmail has no such page.
   */
  mailboxLinks?(doc: Document, url: URL): URL[];
  /** The MailSource id the message at a mailbox link has (so a backlog is known before its pages are fetched). */
  sourceIdOf?(link: URL): string | undefined;
  /**
   * On a mailbox list, each listed message's MailSource id and the element showing its subject (where
   * the list shows "..." for a PGP/MIME message, the protected subject from the local index goes).
   */
  listedSubjects?(doc: Document, url: URL): { sourceId: string; cell: HTMLElement }[];
  /** The folder a message view is in, where the webmail has an Inbox and a Junk folder. */
  folderOf?(view: MessageView): MailFolder | undefined;
  /** Moves the message (a same-origin request in the user's session): spam to Junk, "not spam" back. */
  moveTo?(view: MessageView, folder: MailFolder): Promise<void>;
  /** One-click connect, where this page offers it (logged in; Roundcube: with the provider's plugin). */
  connectOffer?(doc: Document, url: URL): ConnectOffer | undefined;
  /**
   * The message of a live view as the webmail's server holds it (through the background: the tab's
   * own site, the user's session): what is decrypted, never the page's text, which its scripts can
   * replace with any ciphertext (Roundcube also shows a PGP/MIME body only as an attachment).
   */
  loadMessage(view: MessageView): Promise<LoadedMessage>;
}

export interface LoadedMessage {
  /** The raw message (RFC 5322), or the part of it holding the armor. */
  text: string;
  contentType?: string;
  /** Headers as the server's copy shows them, those it has (they replace the page's). */
  headers?: Partial<Pick<MailSource, 'from' | 'to' | 'subject' | 'date'>>;
  /** The id the provider's LMTP stage assigned at delivery (X-PMF-Message-Id of the raw message), if any. */
  providerId?: string;
}

export type MailFolder = 'inbox' | 'junk';

export interface ConnectOffer {
  /** The element the bar goes first in. */
  at: Element;
  /**
   * A fresh token for the logged-in user, asked of the webmail's own server in the user's session
   * (a same-origin request), with the provider's origin when it is not the page's. Both come from
   * that answer, never from the page's DOM, which the page's scripts and mail content can forge.
   */
  issueToken?(): Promise<IssuedToken>;
  /**
   * Or where the extension's background asks for them (Roundcube's pmf_connect): its request
   * carries the extension's own Origin, which no script on the webmail's pages can send, so the
   * webmail's server gives a token to the extension only, and the answer never reaches the page.
   */
  fromBackground?: { action: string; requestToken: string };
}

export interface IssuedToken {
  token: string;
  /** The provider's origin, when it is not the webmail page's own. */
  provider?: string;
}

/** Reads a webmail's token answer (`{token, provider?}`, or `{error}` in plain words). */
export async function issuedToken(r: Response): Promise<IssuedToken> {
  type Answer = { token?: unknown; provider?: unknown; error?: unknown };
  let answer: Answer = {};
  try {
    answer = ((await r.json()) as Answer | null) ?? {};
  } catch {
    answer = {};
  }
  const { token, provider, error } = answer;
  if (r.ok && typeof token === 'string' && token && token.length <= 4096) {
    if (provider === undefined) return { token };
    if (typeof provider === 'string' && provider.length <= 2048) return { token, provider };
  }
  throw new Error(
    typeof error === 'string' && error.length <= 200 ? error : `The webmail gave no token (HTTP ${r.status}).`,
  );
}
