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
  bar.setAttribute('aria-label', 'Search index');
  const label = Object.assign(doc.createElement('span'), {
    textContent: `Decrypt and index these ${links.length} messages for local search.`,
  });
  label.setAttribute('role', 'status');
  const button = Object.assign(doc.createElement('button'), { type: 'button', textContent: 'Index mailbox' });
  const progress = Object.assign(doc.createElement('progress'), { hidden: true });
  progress.setAttribute('aria-label', 'Indexing for search');
  const showRead = (done: number) =>
    showProgress(progress, done, links.length, `${done} of ${links.length} messages read`);
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
    button.textContent = 'Pause';
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
        label.textContent = `Indexing ${done} of ${links.length}…`;
      },
    );
    running = false;
    button.disabled = false;
    const { tally, next } = pass;
    if (next < links.length && !tally.locked) {
      bar.dataset.state = 'paused';
      label.textContent = `Paused after ${next} of ${links.length} messages.`;
      button.textContent = 'Resume';
      return;
    }
    label.textContent = describe(tally, links.length);
    bar.dataset.state = tally.locked ? 'locked' : 'done';
    bar.dataset.indexed = String(tally.indexed);
    button.textContent = 'Index again';
    pass = undefined;
  });
}

function describe(t: Tally, total: number): string {
  if (t.locked) return 'Your key is locked: unlock it from the extension icon, then index again.';
  const extra = [
    t['other-key'] && `${t['other-key']} not for your keys`,
    t.damaged && `${t.damaged} damaged`,
    t.plain && `${t.plain} not encrypted`,
    t.unread && `${t.unread} could not be read`,
  ].filter(Boolean);
  const why = [...t.reasons].join(' ');
  return `Indexed ${t.indexed} of ${total} messages.${extra.length ? ` ${extra.join(', ')}.` : ''}${why ? ` ${why}` : ''}`;
}
