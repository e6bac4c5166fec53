// On a mailbox listing page: offers to decrypt and index every listed
// message for local search, with a progress bar and a pause (resuming goes
// on from the next message). Each message is read as listed-message.ts
// does, through the same adapter as a live message view. Like every piece of
// the extension's UI in a page, the bar sits in a closed shadow root (its
// tally says how many messages decrypted, which is not the page's to read)
// and starts only on the user's own click.
import type { WebmailAdapter } from './adapters/adapter.js';
import { indexFrom, newPass, type Pass, type Tally } from './index-pass.js';
import { showProgress } from '../lib/ui.js';
import { decryptListed } from './listed-message.js';
import { t } from '../lib/i18n.js';

const STYLE = `.bar{font:13px system-ui,sans-serif;border:1px solid #8a99ad;background:#eef1f5;border-radius:6px;padding:8px 10px;margin:8px 0}
button{font:12px system-ui,sans-serif;margin:0 8px}progress{width:200px;vertical-align:middle}`;

/** Pages the bar is on (not looked up in the page's DOM: a page could plant a lookalike to keep it away). */
const offered = new WeakSet<Document>();

export function offerMailboxIndexing(adapter: WebmailAdapter, doc: Document, url: URL): void {
  const links = adapter.mailboxLinks?.(doc, url) ?? [];
  if (links.length === 0 || offered.has(doc)) return;
  offered.add(doc);
  const host = doc.createElement('div');
  host.className = 'pmf-mailbox';
  const root = host.attachShadow({ mode: 'closed' });
  // For screen readers, as the spam check's bar: a named region, its sentence a polite live region, and
  // a progress bar that says its count in words.
  const bar = Object.assign(doc.createElement('div'), { className: 'bar' });
  bar.setAttribute('role', 'region');
  bar.setAttribute('aria-label', t('mailbox_region'));
  const label = Object.assign(doc.createElement('span'), {
    textContent: t('mailbox_offer', links.length),
  });
  label.setAttribute('role', 'status');
  const button = Object.assign(doc.createElement('button'), { type: 'button', textContent: t('index_mailbox') });
  const progress = Object.assign(doc.createElement('progress'), { hidden: true });
  progress.setAttribute('aria-label', t('mailbox_progress_name'));
  const showRead = (done: number) => showProgress(progress, done, links.length, t('progress_read', done, links.length));
  showRead(0);
  const style = Object.assign(doc.createElement('style'), { textContent: STYLE });
  bar.append(label, button, progress);
  root.append(style, bar);
  (doc.querySelector('main') ?? doc.body).prepend(host);

  let pass: Pass | undefined;
  let running = false;
  let pausing = false;
  button.addEventListener('click', async (e) => {
    if (!e.isTrusted) return; // the page's scripts cannot start it
    if (running) {
      // Pause after the message being read.
      pausing = true;
      button.disabled = true;
      return;
    }
    pass ??= newPass();
    running = true;
    pausing = false;
    button.textContent = t('options_tb_pause');
    progress.hidden = false;
    bar.dataset.state = 'running';
    const read = (link: URL) => decryptListed(adapter, link);
    await indexFrom(
      links,
      read,
      pass,
      () => pausing,
      (done) => {
        showRead(done);
        label.textContent = t('mailbox_indexing', done, links.length);
      },
    );
    running = false;
    button.disabled = false;
    const { tally, next } = pass;
    if (next < links.length && !tally.locked) {
      bar.dataset.state = 'paused';
      label.textContent = t('mailbox_paused', next, links.length);
      button.textContent = t('options_tb_resume');
      return;
    }
    label.textContent = describe(tally, links.length);
    bar.dataset.state = tally.locked ? 'locked' : 'done';
    bar.dataset.indexed = String(tally.indexed);
    button.textContent = t('mailbox_again');
    pass = undefined;
  });
}

function describe(tally: Tally, total: number): string {
  if (tally.locked) return t('mailbox_locked');
  const extra = [
    tally['other-key'] && t('mailbox_other_key', tally['other-key']),
    tally.damaged && t('mailbox_damaged', tally.damaged),
    tally.plain && t('mailbox_plain', tally.plain),
    tally.unread && t('mailbox_unread', tally.unread),
  ].filter(Boolean);
  const why = [...tally.reasons].join(' ');
  return `${t('mailbox_done', tally.indexed, total)}${extra.length ? ` ${extra.join(', ')}.` : ''}${why ? ` ${why}` : ''}`;
}
