// A webmail adapter knows one webmail's DOM: where a message view is, its
// metadata, and the element holding its (encrypted) body. Adding support for
// a webmail is one new file implementing this and one line in ./index.ts.
import type { MailSource } from '../../lib/messages.js';

export interface MessageView {
  source: MailSource;
  /** Element whose text holds the armored OpenPGP content; the badge goes before it. */
  body: HTMLElement;
  /** The body text, plus the MIME content type when the page shows it. */
  text: string;
  contentType?: string;
}

export interface WebmailAdapter {
  name: string;
  /** Whether this adapter handles the current page. */
  matches(doc: Document): boolean;
  /** Message views currently in the DOM. */
  findMessages(doc: Document): MessageView[];
}
