// Content script side: shows the private spam check's outcome on a message
// view (a second badge), as the background reports it, and acts on a fresh
// spam verdict where the webmail has a Junk folder: moves the message there
// and offers "Not spam" to move it back. The badge text is the background's;
// details sit behind a disclosure. The verdict is the user's, not the page's:
// the badge lives in a closed shadow root created from this isolated world
// (the page gets null for host.shadowRoot and cannot hook our attachShadow),
// and nothing about it is mirrored into the page's DOM.
import browser from 'webextension-polyfill';
import type { MessageView, WebmailAdapter } from '../content/adapters/adapter.js';
import { TOPIC_SHARED, type SpamBadge } from './faults.js';
import { SPAM_BADGE, USER_VERDICT, type SpamBadgeMessage, type UserVerdictRequest } from './messages.js';
import { t } from '../lib/i18n.js';

const STYLE = `.spam{font:13px system-ui,sans-serif;border-radius:6px;padding:6px 10px;margin:8px 0;border:1px solid #8a99ad;background:#eef1f5;color:#2c3a4d}
.spam[data-state=spam]{background:#fde8e8;border-color:#c0392b;color:#7b1d12}.spam[data-state=not-spam]{background:#e7f6ea;border-color:#3a8f4b;color:#1d5228}
details,.topic,.blocklist{margin-top:4px;font-size:12px}.blocklist{font-weight:600}`;

/** Each state in words: the badge's accessible name, as screen readers say it (its colour says it to the eye). */
const STATE_WORDS: Record<SpamBadge['state'], string> = {
  checking: t('spam_state_checking'),
  waiting: t('spam_state_waiting'),
  spam: t('spam_state_spam'),
  'not-spam': t('spam_state_not_spam'),
  'checked-before': t('spam_state_checked_before'),
  unavailable: t('spam_state_not_checked'),
};

/** Each host's closed shadow root: only this content script holds them. */
const roots = new WeakMap<HTMLElement, ShadowRoot>();
/** Message bodies this script moved to Junk: a later badge (a blocklist hit, the topic line) still says so. */
const moved = new WeakSet<HTMLElement>();
const shows = new WeakMap<HTMLElement, Promise<void>>();

function render(body: HTMLElement, badge: SpamBadge): HTMLElement {
  let host = body.parentElement?.querySelector<HTMLElement>(':scope > .pmf-spam-host');
  let root = host && roots.get(host);
  if (!host || !root) {
    host?.remove(); // one the page made to look like ours
    host = document.createElement('div');
    host.className = 'pmf-spam-host';
    root = host.attachShadow({ mode: 'closed' });
    roots.set(host, root);
    // Above the decryption badge and its viewer frame, so it is seen first.
    (body.parentElement?.querySelector(':scope > .pmf-host') ?? body).before(host);
  }
  const el = document.createElement('div');
  el.className = 'spam';
  el.dataset.state = badge.state;
  el.setAttribute('role', 'status');
  el.setAttribute('aria-label', t('spam_name', STATE_WORDS[badge.state]));
  el.textContent = badge.text;
  for (const line of badge.blocklist ?? [])
    el.append(Object.assign(document.createElement('div'), { className: 'blocklist', textContent: line }));
  if (badge.topicShared)
    el.append(Object.assign(document.createElement('div'), { className: 'topic', textContent: TOPIC_SHARED }));
  if (badge.detail) {
    const d = document.createElement('details');
    d.append(Object.assign(document.createElement('summary'), { textContent: 'Details' }), badge.detail);
    el.append(d);
  }
  const style = document.createElement('style');
  style.textContent = STYLE;
  root.replaceChildren(style, el);
  return el;
}

/**
 * "Not spam": back to the Inbox; the stored verdict stays with the user's
 * correction next to it (the badge then says so), and only fresh verdicts move mail.
 */
function offerNotSpam(el: HTMLElement, adapter: WebmailAdapter, view: MessageView): void {
  const button = Object.assign(document.createElement('button'), {
    type: 'button',
    textContent: t('spam_not_spam_button'),
  });
  button.style.marginLeft = '8px';
  button.addEventListener('click', async () => {
    try {
      await adapter.moveTo!(view, 'inbox');
      moved.delete(view.body);
      const mark: UserVerdictRequest = { [USER_VERDICT]: view.source.id, spam: false };
      await browser.runtime.sendMessage(mark).catch(() => {}); // the move is what counts for the mailbox
      render(view.body, { state: 'not-spam', text: t('spam_moved_back') });
    } catch (e) {
      render(view.body, {
        state: 'unavailable',
        text: t('spam_move_back_failed'),
        detail: (e as Error).message,
      });
    }
  });
  el.insertBefore(button, el.querySelector('details'));
}

async function show(adapter: WebmailAdapter, view: MessageView, m: SpamBadgeMessage): Promise<void> {
  if (!adapter.moveTo || !adapter.folderOf || m.badge.state !== 'spam') return void render(view.body, m.badge);
  const folder = adapter.folderOf(view);
  if (m.moveToJunk && folder === 'inbox') {
    render(view.body, m.badge);
    try {
      await adapter.moveTo(view, 'junk');
    } catch (e) {
      render(view.body, {
        ...m.badge,
        text: t('spam_move_failed', m.badge.text),
        detail: (e as Error).message,
      });
      return;
    }
    moved.add(view.body);
  }
  const el = render(view.body, moved.has(view.body) ? { ...m.badge, text: t('spam_moved', m.badge.text) } : m.badge);
  if (adapter.folderOf(view) === 'junk') offerNotSpam(el, adapter, view);
}

/**
 * Shows each badge on the view the content script read under that id (`viewOf`): the message as it was
 * named at scan time, not whatever the page says now, so a move goes to the message that was checked.
 */
export function listenForSpamBadges(
  viewOf: (sourceId: string) => { adapter: WebmailAdapter; view: MessageView } | undefined,
): void {
  browser.runtime.onMessage.addListener((msg: unknown) => {
    const m = msg as SpamBadgeMessage | null;
    if (m?.type !== SPAM_BADGE || typeof m.sourceId !== 'string') return undefined;
    const { adapter, view } = viewOf(m.sourceId) ?? {};
    if (!adapter || !view?.body.isConnected) return undefined;
    // One badge after the other per message (a hit can follow its verdict while the verdict's move is under way).
    const next = (shows.get(view.body) ?? Promise.resolve()).then(() => show(adapter, view, m)).catch(() => {});
    shows.set(view.body, next);
    return undefined;
  });
}
