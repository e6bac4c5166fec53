// Content script: on a mailbox list that shows "..." for PGP/MIME mail (its
// real subject is inside the encryption), the protected subject of each such
// message the local search index holds goes next to it, in a one-line
// extension frame (viewer.html?line) in a closed shadow root: the content
// script asks the background for single-use view ids only (background/views.ts),
// so neither it nor the page ever holds the subject, and the page cannot read
// an id to spend it first. Messages not indexed yet keep the list's "...".
import browser from 'webextension-polyfill';
import { MAX_LISTED } from '../lib/messages.js';
import { ask } from '../lib/rpc.js';
import type { WebmailAdapter } from './adapters/adapter.js';

/** Cells that got their frame: not asked about again. */
const shown = new WeakSet<HTMLElement>();
const HIDDEN = /^\s*\.\.\.\s*$/;

export async function showListedSubjects(adapter: WebmailAdapter, doc: Document, url: URL): Promise<void> {
  const rows = (adapter.listedSubjects?.(doc, url) ?? [])
    .filter(({ cell }) => !shown.has(cell) && HIDDEN.test(cell.textContent ?? ''))
    .slice(0, MAX_LISTED);
  if (rows.length === 0) return;
  const views = await ask<Record<string, string>>({ type: 'list-subjects', ids: rows.map((r) => r.sourceId) }).catch(
    () => ({}) as Record<string, string>,
  );
  for (const { sourceId, cell } of rows) {
    const viewId = views[sourceId];
    if (!viewId || shown.has(cell)) continue;
    shown.add(cell);
    const frame = doc.createElement('iframe');
    frame.src = `${browser.runtime.getURL('viewer.html')}?line#${viewId}`;
    frame.title = 'Subject';
    frame.className = 'pmf-subject';
    Object.assign(frame.style, {
      border: '0',
      height: '1.5em',
      width: '70%',
      verticalAlign: 'middle',
      marginLeft: '6px',
    });
    const host = doc.createElement('span');
    host.attachShadow({ mode: 'closed' }).append(frame);
    cell.append(host);
  }
}
