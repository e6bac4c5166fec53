// Content script for supported webmail pages: finds OpenPGP messages through
// the page's adapter, asks the background to decrypt/verify, and shows the
// outcome in place. Messages that were locked are retried when keys change;
// when the spam check becomes ready (connected, or the provider answers
// again), the decrypted ones are offered again and the mailbox's unchecked
// mail is checked.
import browser from 'webextension-polyfill';
import { findPgpBlocks } from '../../mail/pgp.js';
import { headerValue } from '../../mail/headers.js';
import { fromHeader } from '../../mail/signer.js';
import { KEYS_CHANGED, type BadgeInfo } from '../lib/messages.js';
import { toPlain } from '../lib/plain-error.js';
import { ask } from '../lib/rpc.js';
import { adapterFor } from './adapters/index.js';
import { renderBadge } from './badge.js';
import { showListedSubjects } from './list-subjects.js';
import { offerMailboxIndexing } from './mailbox-indexer.js';
import { listenForSpamBadges } from '../private/spam-badge.js';
import { offerOneClickConnect } from '../private/connect-offer.js';
import { offerBacklogCheck, resetBacklogCheck } from '../private/backlog-bar.js';
import { SPAM_CHECK_READY } from '../private/messages.js';

/** Outcomes that new or unlocked keys can change; and, for the spam check, decrypted messages too. */
const RETRYABLE = new Set(['locked', 'not-for-this-key', 'error']);
const RESPAM = new Set([...RETRYABLE, 'decrypted']);
let scanning = false;
let again = false;
let retryQueued: boolean | 'spam' = false;

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
      const state = view.body.dataset.pmfState;
      if (state && !(retry && (retry === 'spam' ? RESPAM : RETRYABLE).has(state))) continue;
      let [block] = findPgpBlocks(view.text, view.contentType);
      let source = view.source;
      if (adapter.loadMessage) {
        // The page does not hold the whole message (or the provider's id): read it from the server, once.
        view.body.dataset.pmfState = 'pending';
        try {
          const loaded = await adapter.loadMessage(view);
          [block = block] = findPgpBlocks(loaded.text);
          if (loaded.providerId) source = { ...source, providerId: loaded.providerId };
          // The page may show only the sender's name: the signer is checked against the raw From.
          const from = fromHeader(loaded.text);
          if (from) source = { ...source, from };
          // And a date in its own words ("Today 10:32"): the message is indexed under the raw Date.
          const date = headerValue(loaded.text, 'date');
          if (date && Number.isFinite(Date.parse(date))) source = { ...source, date };
        } catch (e) {
          console.warn('PMF: could not read the raw message:', toPlain(e).message);
        }
        if (!block) view.body.dataset.pmfState = 'plain';
      }
      if (!block) continue;
      view.body.dataset.pmfState = 'pending';
      try {
        const info = await ask<BadgeInfo>({ type: 'decrypt', block, source });
        view.body.dataset.pmfState = info.status;
        renderBadge(view.body, info);
      } catch (e) {
        view.body.dataset.pmfState = 'error';
        renderBadge(view.body, {
          status: 'failed',
          summary: `The extension could not process this message. ${toPlain(e).message}`,
          signature: { status: 'unsigned' },
        });
      }
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
listenForSpamBadges();
void scan();
