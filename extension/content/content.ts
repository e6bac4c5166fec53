// Content script for the webmail sites the user added (lib/webmail-sites.ts): finds the message the
// page shows through the page's adapter, reads it as the webmail's server
// holds it, asks the background to decrypt/verify it, and shows the outcome
// in an extension frame (message-frame.ts). The page's scripts may be hostile
// (an XSS, or the webmail itself): only a visible message the adapter names is
// read, never an element the page planted or the text it put there, and what
// happened is kept here, not in the page's DOM. Messages that were locked are
// retried when keys change; when the spam check becomes ready (connected, or
// the provider answers again), the decrypted ones are offered again and the
// mailbox's unchecked mail is checked.
import browser from 'webextension-polyfill';
import { findPgpBlocks } from '../../mail/pgp.js';
import { KEYS_CHANGED, type BadgeInfo } from '../lib/messages.js';
import { toPlain } from '../lib/plain-error.js';
import { ask } from '../lib/rpc.js';
import { isWebmailSite } from '../lib/webmail-sites.js';
import type { MessageView, WebmailAdapter } from './adapters/adapter.js';
import { adapterFor } from './adapters/index.js';
import { showListedSubjects } from './list-subjects.js';
import { foldOriginal, listenForViewerHeights, showFailure, showView } from './message-frame.js';
import { offerMailboxIndexing } from './mailbox-indexer.js';
import { listenForSpamBadges } from '../private/spam-badge.js';
import { offerOneClickConnect } from '../private/connect-offer.js';
import { offerBacklogCheck, resetBacklogCheck } from '../private/backlog-bar.js';
import { SPAM_CHECK_READY } from '../private/messages.js';

/** Outcomes that new or unlocked keys can change; and, for the spam check, decrypted messages too. */
const RETRYABLE = new Set(['locked', 'not-for-this-key', 'error']);
/** When the spam check becomes ready: those, and the decrypted ones (offered for the check again). */
const RESPAM = new Set([...RETRYABLE, 'decrypted']);
/** Each message body's outcome so far. */
const outcome = new WeakMap<HTMLElement, string>();
/** The views read, by MailSource id, as they were at scan time (the spam badge acts on these). */
const read = new Map<string, { adapter: WebmailAdapter; view: MessageView }>();
let scanning = false;
let again = false;
let retryQueued: boolean | 'spam' = false;

/** Shown to the user: not hidden by the page's styles (a planted, hidden message is never read). */
const visible = (el: HTMLElement) =>
  el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true }) && el.getClientRects().length > 0;

/** retry: also revisit messages whose outcome may change with the keys ('spam': and the decrypted ones). */
async function scan(retry: boolean | 'spam' = false): Promise<void> {
  if (scanning) {
    again = true;
    retryQueued = retry === 'spam' || retryQueued === 'spam' ? 'spam' : retryQueued || retry;
    return;
  }
  scanning = true;
  try {
    const adapter = adapterFor(document);
    if (!adapter) return;
    const url = new URL(location.href);
    offerMailboxIndexing(adapter, document, url);
    void offerOneClickConnect(adapter, document, url);
    void offerBacklogCheck(adapter, document, url);
    void showListedSubjects(adapter, document, url);
    for (const view of adapter.findMessages(document, url)) {
      const was = outcome.get(view.body);
      if (was ? !(retry && (retry === 'spam' ? RESPAM : RETRYABLE).has(was)) : !visible(view.body)) continue;
      outcome.set(view.body, 'pending');
      outcome.set(view.body, await readMessage(adapter, view));
    }
  } finally {
    scanning = false;
    if (again) {
      const r = retryQueued;
      again = retryQueued = false;
      void scan(r);
    }
  }
}

/** Reads one message from the webmail's server, decrypts it and shows the outcome; returns the outcome. */
async function readMessage(adapter: WebmailAdapter, view: MessageView): Promise<string> {
  let loaded;
  try {
    loaded = await adapter.loadMessage(view);
  } catch (e) {
    console.warn('PMF: could not read the message from the webmail:', toPlain(e).message);
    return 'error';
  }
  const [block] = findPgpBlocks(loaded.text, loaded.contentType);
  if (!block) return 'plain';
  foldOriginal(view.body);
  const source = {
    ...view.source,
    ...loaded.headers,
    ...(loaded.providerId ? { providerId: loaded.providerId } : {}),
  };
  read.set(source.id, { adapter, view });
  try {
    const info = await ask<BadgeInfo>({ type: 'decrypt', block, source });
    if (info.viewId) showView(view.body, info.viewId);
    return info.status;
  } catch (e) {
    showFailure(view.body, toPlain(e).message);
    return 'error';
  }
}

async function start(): Promise<void> {
  // Registered for the sites' hosts on every port: only the exact origins the user added.
  if (!(await isWebmailSite(browser.storage.local, location.href))) return;
  browser.runtime.onMessage.addListener((msg: unknown) => {
    const type = (msg as { type?: string } | null)?.type;
    if (type === KEYS_CHANGED.type) void scan(true);
    if (type === SPAM_CHECK_READY.type) {
      resetBacklogCheck(document);
      void scan('spam');
    }
    return undefined;
  });
  // Webmail UIs render late and change views without reloading.
  let pending: ReturnType<typeof setTimeout> | undefined;
  new MutationObserver(() => {
    clearTimeout(pending);
    pending = setTimeout(() => void scan(), 150);
  }).observe(document.body, { childList: true, subtree: true });
  listenForViewerHeights();
  listenForSpamBadges((sourceId) => read.get(sourceId));
  void scan();
}

void start();
