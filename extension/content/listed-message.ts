// One message of a mailbox listing, read the way Index mailbox and the spam
// backlog both need: the background fetches its page (same site, the user's
// session; a content script's own fetch obeys the page's CSP in Firefox), it
// is parsed here inertly with DOMParser, read through the page's adapter, and
// decrypted by the background for indexing (which also offers it to the
// private spam check).
import { findPgpBlocks } from '../../mail/pgp.js';
import type { BadgeInfo } from '../lib/messages.js';
import { ask } from '../lib/rpc.js';
import type { MessageView, WebmailAdapter } from './adapters/adapter.js';

/** The message view and its decryption outcome; undefined when the page holds no OpenPGP message. */
export async function decryptListed(
  adapter: WebmailAdapter,
  link: URL,
): Promise<{ view: MessageView; info: BadgeInfo } | undefined> {
  const html = await ask<string>({ type: 'fetch-page', url: link.href });
  const [view] = adapter.findMessages(new DOMParser().parseFromString(html, 'text/html'), link);
  const [block] = view ? findPgpBlocks(view.text, view.contentType) : [];
  if (!view || !block) return undefined;
  return { view, info: await ask<BadgeInfo>({ type: 'decrypt', block, source: view.source, indexOnly: true }) };
}
