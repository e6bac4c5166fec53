// The demo webmail served by provider-server at /mail
// (provider-server/src/webmail/index.ts defines this DOM). A message page is
// /mail/m/<id>, showing one `article.message` with that id. The message is
// named by the page's address; its body is read from the server's copy of
// that page, and its id and folder are kept here from then on (a page's
// scripts can rename the article, nest another one or plant more).
import { ask } from '../../lib/rpc.js';
import { issuedToken, type MailFolder, type MessageView, type WebmailAdapter } from './adapter.js';

const text = (root: Element, sel: string) => root.querySelector(sel)?.textContent?.trim() ?? '';

/** Each view's message id and folder, as read at scan time and moved since; out of the page's DOM. */
const where = new WeakMap<HTMLElement, { id: string; folder?: MailFolder }>();

const folderOf = (article: HTMLElement): MailFolder | undefined => {
  const f = article.dataset.folder;
  return f === 'junk' || f === 'inbox' ? f : undefined;
};

/**
 * The articles showing the message the page's address names (the server shows one; a page's scripts
 * may add copies, which the content script reads only where they are visible, from the server's copy).
 */
function messagesOf(doc: Document, url: URL): { id: string; article: HTMLElement; body: HTMLElement }[] {
  const m = /^\/mail\/m\/([^/]+)$/.exec(url.pathname);
  let id: string;
  try {
    id = m ? decodeURIComponent(m[1]) : '';
  } catch {
    return [];
  }
  return [...doc.querySelectorAll<HTMLElement>('article.message')].flatMap((article) => {
    const body = article.querySelector<HTMLElement>(':scope > pre.body');
    return id && article.dataset.messageId === id && body ? [{ id, article, body }] : [];
  });
}

export const demoWebmail: WebmailAdapter = {
  name: 'demo-webmail',
  matches: (doc) => doc.body?.classList.contains('pmf-demo-webmail') ?? false,
  findMessages(doc, url) {
    return messagesOf(doc, url).map(({ id, article, body }) => {
      // A fetched page is the server's copy (the backlog moves by it); a live page's folder is replaced by loadMessage.
      if (!where.has(body)) where.set(body, { id, folder: folderOf(article) });
      return {
        source: {
          id: `${url.origin}/mail#${id}`,
          url: url.href,
          from: text(article, '.from'),
          to: text(article, '.to'),
          subject: text(article, '.subject'),
          date: text(article, '.date'),
        },
        body,
        text: body.textContent ?? '',
        contentType: body.dataset.contentType,
      };
    });
  },
  async loadMessage(view) {
    const url = new URL(view.source.url);
    const html = await ask<string>({ type: 'fetch-page', url: url.href });
    const [served] = messagesOf(new DOMParser().parseFromString(html, 'text/html'), url);
    const at = where.get(view.body);
    if (!served || !at || served.id !== at.id) throw new Error('The webmail did not show this message.');
    at.folder = folderOf(served.article);
    const { article, body } = served;
    return {
      text: body.textContent ?? '',
      contentType: body.dataset.contentType,
      headers: {
        from: text(article, '.from'),
        to: text(article, '.to'),
        subject: text(article, '.subject'),
        date: text(article, '.date'),
      },
    };
  },
  mailboxLinks(doc, url) {
    return [...doc.querySelectorAll<HTMLAnchorElement>('table.inbox tr.message-row .subject a[href]')]
      .map((a) => new URL(a.getAttribute('href')!, url))
      .filter((u) => u.origin === url.origin);
  },
  sourceIdOf(link) {
    const m = /^\/mail\/m\/([^/]+)$/.exec(link.pathname);
    return m ? `${link.origin}/mail#${decodeURIComponent(m[1])}` : undefined;
  },
  listedSubjects(doc, url) {
    return [...doc.querySelectorAll<HTMLElement>('table.inbox tr.message-row td.subject')].flatMap((cell) => {
      const href = cell.querySelector('a[href]')?.getAttribute('href');
      const sourceId = href ? this.sourceIdOf!(new URL(href, url)) : undefined;
      return sourceId ? [{ sourceId, cell }] : [];
    });
  },
  folderOf: (view) => where.get(view.body)?.folder,
  async moveTo(view: MessageView, folder: MailFolder) {
    const at = where.get(view.body);
    if (!at) throw new Error('This message is not on this page any more.');
    const r = await fetch(new URL(`/mail/m/${encodeURIComponent(at.id)}/move`, view.source.url), {
      method: 'POST',
      body: new URLSearchParams({ folder }),
      credentials: 'same-origin',
    });
    if (!r.ok) throw new Error(`The webmail refused the move (HTTP ${r.status}).`);
    at.folder = folder;
  },
  connectOffer(doc, url) {
    if (!doc.querySelector('a[href="/mail/logout"]')) return undefined;
    return {
      at: doc.querySelector('main') ?? doc.body,
      issueToken: async () =>
        issuedToken(await fetch(new URL('/mail/extension-token', url), { method: 'POST', credentials: 'same-origin' })),
    };
  },
};
