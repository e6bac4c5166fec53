// Content script: on a mailbox listing, the messages the private spam check
// has no outcome for yet (a mailbox opened for the first time) are checked
// right away with a progress bar that can be paused and resumed
// (backlog.ts runs it). Like the badge, the bar sits in a closed shadow root:
// its counts are the user's, not the page's. A fresh spam verdict moves the
// message to Junk as on its own page, when the user lets the extension move spam.
import browser from 'webextension-polyfill';
import type { MessageView, WebmailAdapter } from '../content/adapters/adapter.js';
import { decryptListed } from '../content/listed-message.js';
import { BacklogRun, type BacklogProgress } from './backlog.js';
import { BACKLOG_UNCHECKED, SPAM_BADGE, type BacklogRequest, type SpamBadgeMessage } from './messages.js';

const STYLE = `.bar{font:13px system-ui,sans-serif;border:1px solid #8a99ad;background:#eef1f5;border-radius:6px;padding:8px 10px;margin:8px 0}
button{font:12px system-ui,sans-serif;margin:0 8px}progress{width:200px;vertical-align:middle;margin-left:8px}`;

type Reply = { ok: boolean; value?: unknown } | undefined;

async function unchecked(ids: string[]): Promise<Set<string>> {
  const req: BacklogRequest = { [BACKLOG_UNCHECKED]: ids };
  const r = (await browser.runtime.sendMessage(req)) as Reply;
  return new Set(r?.ok && Array.isArray(r.value) ? (r.value as string[]) : []);
}

/** The estimate in plain words, or nothing before there is one. */
function timeLeft(ms: number | undefined): string {
  if (ms === undefined) return '';
  const minutes = Math.round(ms / 60_000);
  return minutes < 1 ? ', less than a minute left' : `, about ${minutes} minute${minutes === 1 ? '' : 's'} left`;
}

function describe(p: BacklogProgress, moved: number): string {
  const junk = moved ? ` ${moved} moved to Junk.` : '';
  const missed = p.unanswered ? ` ${p.unanswered} got no answer; they are checked when you open them.` : '';
  switch (p.state) {
    case 'running':
      return `Checking your new mail for spam privately: ${p.done} of ${p.total}${timeLeft(p.etaMs)}…`;
    case 'paused':
      return `Spam check paused: ${p.done} of ${p.total} done.${junk}`;
    case 'locked':
      return `Spam check paused: your key is locked. Unlock it from the extension icon, then resume.${junk}`;
    case 'done':
      return `Checked ${p.checked} of ${p.total} new messages for spam privately.${junk}${missed}`;
  }
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
  if (work.length === 0) return void (host.hidden = true);

  const root = host.attachShadow({ mode: 'closed' });
  const bar = Object.assign(doc.createElement('div'), { className: 'bar' });
  bar.setAttribute('role', 'status');
  const label = doc.createElement('span');
  const progress = Object.assign(doc.createElement('progress'), { max: work.length, value: 0 });
  const button = Object.assign(doc.createElement('button'), { type: 'button', textContent: 'Pause' });
  bar.append(label, progress, button);
  root.append(Object.assign(doc.createElement('style'), { textContent: STYLE }), bar);

  const views = new Map<string, MessageView>();
  let moved = 0;
  let last: BacklogProgress | undefined;
  const show = (p: BacklogProgress) => {
    last = p;
    bar.dataset.state = p.state;
    label.textContent = describe(p, moved);
    progress.value = p.done;
    button.hidden = p.state === 'done';
    button.textContent = p.state === 'running' ? 'Pause' : 'Resume';
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

  browser.runtime.onMessage.addListener((msg: unknown) => {
    const m = msg as SpamBadgeMessage | null;
    if (m?.type !== SPAM_BADGE || typeof m.sourceId !== 'string' || m.badge.state === 'checking') return undefined;
    const view = views.get(m.sourceId);
    if (view && m.moveToJunk && adapter.moveTo && adapter.folderOf?.(view) === 'inbox')
      void adapter.moveTo(view, 'junk').then(
        () => moved++,
        () => {},
      );
    run.settled(m.sourceId);
    return undefined;
  });
  button.addEventListener('click', () => {
    if (last?.state === 'running') run.pause();
    else void run.resume();
  });
  void run.start();
}
