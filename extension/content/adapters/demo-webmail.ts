// The demo webmail served by provider-server at /mail
// (provider-server/src/webmail/index.ts defines this DOM).
import { issuedToken, type MailFolder, type MessageView, type WebmailAdapter } from './adapter.js';

const text = (root: Element, sel: string) => root.querySelector(sel)?.textContent?.trim() ?? '';

export const demoWebmail: WebmailAdapter = {
  name: 'demo-webmail',
  matches: (doc) => doc.body?.classList.contains('pmf-demo-webmail') ?? false,
  findMessages(doc, url) {
    const views: MessageView[] = [];
    for (const article of doc.querySelectorAll<HTMLElement>('article.message[data-message-id]')) {
      const body = article.querySelector<HTMLElement>('pre.body');
      if (!body) continue;
      views.push({
        source: {
          id: `${url.origin}/mail#${article.dataset.messageId}`,
          url: url.href,
          from: text(article, '.from'),
          to: text(article, '.to'),
          subject: text(article, '.subject'),
          date: text(article, '.date'),
        },
        body,
        text: body.textContent ?? '',
        contentType: body.dataset.contentType,
      });
    }
    return views;
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
  folderOf: (view) => {
    const f = view.body.closest<HTMLElement>('article.message')?.dataset.folder;
    return f === 'junk' || f === 'inbox' ? f : undefined;
  },
  async moveTo(view: MessageView, folder: MailFolder) {
    const id = view.body.closest<HTMLElement>('article.message')?.dataset.messageId;
    if (!id) throw new Error('This message has no id on the page.');
    const r = await fetch(new URL(`/mail/m/${encodeURIComponent(id)}/move`, view.source.url), {
      method: 'POST',
      body: new URLSearchParams({ folder }),
      credentials: 'same-origin',
    });
    if (!r.ok) throw new Error(`The webmail refused the move (HTTP ${r.status}).`);
    view.body.closest<HTMLElement>('article.message')!.dataset.folder = folder;
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
