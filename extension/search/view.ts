// DOM rendering of search results. Mail text is only ever put into text
// nodes (never innerHTML), so markup inside a message shows as text.
import type { SearchHit } from './mail-search.js';
import { segments, type Range } from './snippet.js';
import { t } from '../lib/i18n.js';

/** Schemes a result may link to: webmail pages and extension pages. */
const LINKABLE = new Set(['http:', 'https:', 'moz-extension:', 'chrome-extension:']);

/** The URL if it is safe to put in an href (no javascript:, data: …), else undefined. */
export function safeUrl(url: string | undefined): string | undefined {
  if (!url) return undefined;
  try {
    const u = new URL(url);
    return LINKABLE.has(u.protocol) ? u.href : undefined;
  } catch {
    return undefined;
  }
}

/** Text with the given ranges wrapped in <mark>. */
export function highlighted(doc: Document, text: string, ranges: readonly Range[]): DocumentFragment {
  const frag = doc.createDocumentFragment();
  for (const piece of segments(text, ranges)) {
    const node = doc.createTextNode(piece.text);
    if (piece.mark) {
      const mark = doc.createElement('mark');
      mark.append(node);
      frag.append(mark);
    } else frag.append(node);
  }
  return frag;
}

function formatDate(ms: number): string {
  return new Date(ms).toLocaleString(undefined, { dateStyle: 'medium', timeStyle: 'short' });
}

/**
 * One result. Its subject links to the message's web address; or, for a
 * message without one (Thunderbird's), is a button calling `open` when given.
 */
export function renderHit(doc: Document, hit: SearchHit, open?: (hit: SearchHit) => void): HTMLLIElement {
  const li = doc.createElement('li');
  li.className = 'hit';
  const href = safeUrl(hit.url);
  const subject = doc.createElement(href ? 'a' : open ? 'button' : 'span');
  subject.className = 'hit-subject';
  subject.append(highlighted(doc, hit.subject || '(no subject)', hit.subject ? hit.highlights.subject : []));
  if (subject instanceof HTMLAnchorElement && href) {
    subject.href = href;
    subject.target = '_blank';
    subject.rel = 'noopener noreferrer';
  } else if (subject instanceof HTMLButtonElement && open) {
    subject.type = 'button';
    subject.title = t('search_open_in_thunderbird');

    subject.addEventListener('click', () => open(hit));
  }
  const meta = doc.createElement('div');
  meta.className = 'hit-meta';
  meta.append(highlighted(doc, hit.from, hit.highlights.from), doc.createTextNode(` · ${formatDate(hit.date)}`));
  const snippet = doc.createElement('p');
  snippet.className = 'hit-snippet';
  snippet.append(highlighted(doc, hit.snippet, hit.highlights.snippet));
  li.append(subject, meta, snippet);
  return li;
}
