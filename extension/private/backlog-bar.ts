// Content script: on a mailbox listing, the messages the private spam check
// has no outcome for yet (a mailbox opened for the first time) are checked
// right away with a progress bar that can be paused and resumed
// (backlog.ts runs it). Like the badge, the bar sits in a closed shadow root:
// its counts are the user's, not the page's. A fresh spam verdict moves the
// message to Junk as on its own page, when the user lets the extension move spam
// (a blocklist hit that follows a "not spam" verdict too), and the bar counts
// each move once it is done. While the provider sets the pace or cannot be
// reached, the bar says so (backlog-text.ts). Connecting, or the provider
// answering again, starts a new check of what is still unchecked
// (resetBacklogCheck).
import browser from 'webextension-polyfill';
import type { MessageView, WebmailAdapter } from '../content/adapters/adapter.js';
import { decryptListed } from '../content/listed-message.js';
import { showProgress } from '../lib/ui.js';
import { t } from '../lib/i18n.js';
import { BacklogRun, type BacklogProgress } from './backlog.js';
import { backlogText } from './backlog-text.js';
import { isOutcome } from './faults.js';
import { BACKLOG_UNCHECKED, SPAM_BADGE, type BacklogRequest, type SpamBadgeMessage } from './messages.js';

const STYLE = `.bar{font:13px system-ui,sans-serif;border:1px solid #8a99ad;background:#eef1f5;border-radius:6px;padding:8px 10px;margin:8px 0}
button{font:12px system-ui,sans-serif;margin:0 8px}progress{width:200px;vertical-align:middle;margin-left:8px}`;

type Reply = { ok: boolean; value?: unknown } | undefined;

async function unchecked(ids: string[]): Promise<Set<string>> {
  const req: BacklogRequest = { [BACKLOG_UNCHECKED]: ids };
  const r = (await browser.runtime.sendMessage(req)) as Reply;
  return new Set(r?.ok && Array.isArray(r.value) ? (r.value as string[]) : []);
}

/** The bar of this page, whether its run is still going, and a nudge for the messages waiting for the provider. */
let current: { host: HTMLElement; active: () => boolean; retry: () => void } | undefined;

/**
 * Connected, or the provider answers again: a bar still running offers its
 * messages that wait for the provider again; one that has nothing to do
 * (there was nothing to check, or no connection) or has finished goes, so
 * the next scan of the page checks what is unchecked now.
 */
export function resetBacklogCheck(doc: Document): void {
  const host = doc.querySelector<HTMLElement>('.pmf-backlog');
  if (!host) return;
  if (current?.host === host && current.active()) return current.retry();
  host.remove();
  current = undefined;
}

export async function offerBacklogCheck(adapter: WebmailAdapter, doc: Document, url: URL): Promise<void> {
  const links = adapter.mailboxLinks?.(doc, url) ?? [];
  const idOf = adapter.sourceIdOf?.bind(adapter);
  if (links.length === 0 || !idOf || doc.querySelector('.pmf-backlog')) return;
  const host = doc.createElement('div');
  host.className = 'pmf-backlog';
  (doc.querySelector('main') ?? doc.body).prepend(host); // placed first, so a second scan sees it
  const todo = await unchecked(links.map((l) => idOf(l)).filter((id): id is string => id !== undefined));
  const work = links.filter((l) => todo.has(idOf(l) ?? ''));
  // An empty host stays: removing it would be a DOM change, which rescans the page and asks again.
  if (work.length === 0) {
    host.hidden = true;
    return;
  }

  const root = host.attachShadow({ mode: 'closed' });
  // For screen readers: a named region, whose sentence is announced politely as it changes (not its button),
  // and a progress bar that says its count in words.
  const bar = Object.assign(doc.createElement('div'), { className: 'bar' });
  bar.setAttribute('role', 'region');
  bar.setAttribute('aria-label', t('spam_region'));
  const label = doc.createElement('span');
  label.setAttribute('role', 'status');
  const progress = doc.createElement('progress');
  progress.setAttribute('aria-label', t('backlog_progress_name'));
  showProgress(progress, 0, work.length, t('progress_checked', 0, work.length));
  const button = Object.assign(doc.createElement('button'), { type: 'button', textContent: 'Pause' });
  bar.append(label, progress, button);
  root.append(Object.assign(doc.createElement('style'), { textContent: STYLE }), bar);

  const views = new Map<string, MessageView>();
  let moved = 0;
  let last: BacklogProgress | undefined;
  const show = (p: BacklogProgress) => {
    last = p;
    bar.dataset.state = p.state;
    label.textContent = backlogText(p, moved);
    showProgress(progress, p.done, p.total, t('progress_checked', p.done, p.total));
    button.hidden = p.state === 'done';
    button.textContent = p.state === 'running' || p.state === 'waiting' ? 'Pause' : 'Resume';
  };
  const run = new BacklogRun(
    work,
    {
      offer: async (link) => {
        const listed = await decryptListed(adapter, link);
        if (!listed) return { skip: 'not-encrypted' };
        if (listed.info.status === 'locked') return { skip: 'locked' };
        if (listed.info.status !== 'decrypted') return { skip: 'unreadable' };
        views.set(listed.view.source.id, listed.view);
        return { sourceId: listed.view.source.id };
      },
    },
    show,
  );

  current = { host, active: () => last?.state !== 'done', retry: () => run.retryWaiting() };

  browser.runtime.onMessage.addListener((msg: unknown) => {
    const m = msg as SpamBadgeMessage | null;
    if (m?.type !== SPAM_BADGE || typeof m.sourceId !== 'string') return undefined;
    if (m.badge.state === 'waiting') return void run.waiting(m.sourceId, m.badge.paced ? 'paced' : 'unreachable');
    if (!isOutcome(m.badge)) return undefined;
    const view = views.get(m.sourceId);
    // A move may finish after the last answer (a blocklist hit follows its verdict): counted, and said, when done.
    if (view && m.moveToJunk && adapter.moveTo && adapter.folderOf?.(view) === 'inbox')
      void adapter.moveTo(view, 'junk').then(
        () => {
          moved++;
          if (last) show(last);
        },
        () => {},
      );
    run.settled(m.sourceId);
    return undefined;
  });
  button.addEventListener('click', () => {
    if (last?.state === 'running' || last?.state === 'waiting') run.pause();
    else void run.resume();
  });
  void run.start();
}
