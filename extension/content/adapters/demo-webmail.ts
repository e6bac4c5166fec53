// The demo webmail served by provider-server at /mail
// (provider-server/src/webmail/index.ts defines this DOM).
import type { MessageView, WebmailAdapter } from './adapter.js';

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
};
