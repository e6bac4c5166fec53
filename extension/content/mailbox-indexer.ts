// On a mailbox listing page: offers to decrypt and index every listed
// message for local search, with a progress bar. Each message is read as
// listed-message.ts does, through the same adapter as a live message view.
import { toPlain } from '../lib/plain-error.js';
import type { WebmailAdapter } from './adapters/adapter.js';
import { decryptListed } from './listed-message.js';

const STYLE = `.bar{font:13px system-ui,sans-serif;border:1px solid #8a99ad;background:#eef1f5;border-radius:6px;padding:8px 10px;margin:8px 0}
button{font:12px system-ui,sans-serif;margin:0 8px}progress{width:200px;vertical-align:middle}`;

type Tally = Record<'indexed' | 'locked' | 'other-key' | 'damaged' | 'unread' | 'plain', number> & {
  /** Why messages could not be read, in plain words (usually one reason). */
  reasons: Set<string>;
};

export function offerMailboxIndexing(adapter: WebmailAdapter, doc: Document, url: URL): void {
  const links = adapter.mailboxLinks?.(doc, url) ?? [];
  if (links.length === 0 || doc.querySelector('.pmf-mailbox')) return;
  const host = doc.createElement('div');
  host.className = 'pmf-mailbox';
  const root = host.attachShadow({ mode: 'open' });
  const bar = Object.assign(doc.createElement('div'), { className: 'bar' });
  const label = Object.assign(doc.createElement('span'), {
    textContent: `Decrypt and index these ${links.length} messages for local search.`,
  });
  const button = Object.assign(doc.createElement('button'), { type: 'button', textContent: 'Index mailbox' });
  const progress = Object.assign(doc.createElement('progress'), { max: links.length, value: 0, hidden: true });
  const style = Object.assign(doc.createElement('style'), { textContent: STYLE });
  bar.append(label, button, progress);
  root.append(style, bar);
  (doc.querySelector('main') ?? doc.body).prepend(host);

  button.addEventListener('click', async () => {
    button.disabled = true;
    progress.hidden = false;
    bar.dataset.state = 'running';
    const tally = await indexAll(adapter, links, (done) => {
      progress.value = done;
      label.textContent = `Indexing ${done} of ${links.length}…`;
    });
    label.textContent = describe(tally, links.length);
    bar.dataset.state = tally.locked ? 'locked' : 'done';
    bar.dataset.indexed = String(tally.indexed);
    button.disabled = false;
    button.textContent = 'Index again';
  });
}

async function indexAll(adapter: WebmailAdapter, links: URL[], onProgress: (done: number) => void): Promise<Tally> {
  const tally: Tally = { indexed: 0, locked: 0, 'other-key': 0, damaged: 0, unread: 0, plain: 0, reasons: new Set() };
  for (const [i, link] of links.entries()) {
    try {
      const listed = await decryptListed(adapter, link);
      if (!listed) tally.plain++;
      else {
        const { info } = listed;
        if (info.status === 'decrypted') tally.indexed++;
        else if (info.status === 'locked') tally.locked++;
        else if (info.status === 'not-for-this-key') tally['other-key']++;
        else if (info.status === 'verified-only') tally.plain++;
        else tally.damaged++;
      }
    } catch (e) {
      tally.unread++;
      tally.reasons.add(toPlain(e).message);
    }
    onProgress(i + 1);
    // A locked key makes the rest pointless: say so now.
    if (tally.locked) break;
  }
  return tally;
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
