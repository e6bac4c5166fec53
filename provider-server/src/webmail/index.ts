// Demo webmail at /mail: token login, inbox, message view showing the raw
// (still encrypted) body. Server-rendered HTML with no scripts at all, so the
// extension's content script (extension/content/adapters/demo-webmail.ts) is
// the only code that ever sees plaintext. The DOM contract that adapter relies
// on is the set of class names and data-* attributes below; keep them stable.
import type http from 'node:http';

export interface WebmailSource {
  /** The user a bearer token belongs to (compare tokens in constant time). */
  authenticate(token: string): string | undefined;
  listMessages(userId: string): { id: string; from: string; subject: string; date: string | number }[];
  getMessage(userId: string, id: string): { raw: string } | undefined;
}

export type WebmailHandler = (req: http.IncomingMessage, res: http.ServerResponse) => boolean;

const COOKIE = 'pmf_mail';
const MAX_FORM_BYTES = 4096;
const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export function createWebmailHandler(source: WebmailSource): WebmailHandler {
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/mail' && !url.pathname.startsWith('/mail/')) return false;
    try {
      route(source, req, res, url);
    } catch {
      // Never echo internals (message ids, tokens) into an error page.
      if (!res.headersSent) send(res, 500, page('Error', '<p class="error">Something went wrong.</p>'));
    }
    return true;
  };
}

function route(source: WebmailSource, req: http.IncomingMessage, res: http.ServerResponse, url: URL): void {
  if (url.pathname === '/mail/login' && req.method === 'POST') return login(source, req, res);
  if (url.pathname === '/mail/logout')
    return redirect(res, '/mail', `${COOKIE}=; Path=/mail; Max-Age=0; HttpOnly; SameSite=Strict`);
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return send(res, 405, page('Method not allowed', '<p class="error">Method not allowed.</p>'));

  const userId = userFromCookie(source, req);
  if (!userId) return send(res, url.pathname === '/mail' ? 200 : 401, loginPage(url.searchParams.has('failed')));
  if (url.pathname === '/mail' || url.pathname === '/mail/')
    return send(res, 200, inboxPage(userId, source.listMessages(userId)));
  const m = /^\/mail\/m\/([^/]{1,600})$/.exec(url.pathname);
  if (m) {
    const id = safeDecode(m[1]);
    const msg = id === undefined ? undefined : source.getMessage(userId, id);
    if (id === undefined || !msg)
      return send(
        res,
        404,
        page('Not found', '<p class="error">No such message.</p><p><a href="/mail">Back to inbox</a></p>'),
      );
    const listed = source.listMessages(userId).find((x) => x.id === id);
    return send(res, 200, messagePage(id, msg.raw, listed?.date));
  }
  send(res, 404, page('Not found', '<p class="error">Not found.</p>'));
}

function safeDecode(s: string): string | undefined {
  try {
    return decodeURIComponent(s);
  } catch {
    return undefined;
  }
}

function login(source: WebmailSource, req: http.IncomingMessage, res: http.ServerResponse): void {
  let body = '';
  let tooBig = false;
  req.setEncoding('utf8');
  req.on('data', (chunk: string) => {
    body += chunk;
    if (body.length > MAX_FORM_BYTES) {
      tooBig = true;
      req.destroy();
    }
  });
  req.on('end', () => {
    if (tooBig) return;
    const token = new URLSearchParams(body).get('token')?.trim() ?? '';
    if (!token || !source.authenticate(token)) return redirect(res, '/mail?failed=1');
    redirect(res, '/mail', `${COOKIE}=${encodeURIComponent(token)}; Path=/mail; HttpOnly; SameSite=Strict`);
  });
  req.on('close', () => {
    if (tooBig && !res.headersSent) send(res, 413, page('Too large', '<p class="error">Request too large.</p>'));
  });
}

function userFromCookie(source: WebmailSource, req: http.IncomingMessage): string | undefined {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === COOKIE) {
      try {
        return source.authenticate(decodeURIComponent(rest.join('=')));
      } catch {
        return undefined;
      }
    }
  }
  return undefined;
}

function send(res: http.ServerResponse, status: number, html: string): void {
  res.writeHead(status, {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': PAGE_CSP,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
  });
  res.end(html);
}

function redirect(res: http.ServerResponse, location: string, cookie?: string): void {
  res.writeHead(303, { location, 'cache-control': 'no-store', ...(cookie ? { 'set-cookie': cookie } : {}) });
  res.end();
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

function formatDate(date: string | number | undefined): string {
  if (date === undefined) return '';
  const d = new Date(date);
  return Number.isNaN(d.getTime()) ? String(date) : d.toISOString().replace('T', ' ').slice(0, 16);
}

const STYLE = `body{font:15px system-ui,sans-serif;margin:0;color:#222}header.top{background:#264f7a;color:#fff;padding:10px 16px;display:flex;justify-content:space-between}
header.top a{color:#fff}main{padding:16px;max-width:960px}table.inbox{border-collapse:collapse;width:100%}table.inbox td{padding:6px 8px;border-bottom:1px solid #ddd}
pre.body{white-space:pre-wrap;word-break:break-all;background:#f6f6f6;padding:12px;font-size:12px}.error{color:#a00}`;

function page(title: string, content: string, loggedIn = false): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · Demo Mail</title><style>${STYLE}</style></head>
<body class="pmf-demo-webmail"><header class="top"><strong>Demo Mail</strong>${loggedIn ? '<a href="/mail/logout">Log out</a>' : ''}</header><main>${content}</main></body></html>`;
}

function loginPage(failed: boolean): string {
  return page(
    'Log in',
    `<h1>Log in</h1>${failed ? '<p class="error">Unknown token.</p>' : ''}
<form class="login" method="post" action="/mail/login"><label>Access token <input name="token" type="password" autocomplete="off" required></label> <button type="submit">Log in</button></form>`,
  );
}

function inboxPage(userId: string, messages: ReturnType<WebmailSource['listMessages']>): string {
  const rows = messages
    .map(
      (m) =>
        `<tr class="message-row" data-message-id="${escapeHtml(m.id)}"><td class="from">${escapeHtml(m.from)}</td>` +
        `<td class="subject"><a href="/mail/m/${encodeURIComponent(m.id)}">${escapeHtml(m.subject || '(no subject)')}</a></td><td class="date">${escapeHtml(formatDate(m.date))}</td></tr>`,
    )
    .join('\n');
  return page(
    'Inbox',
    `<h1>Inbox of ${escapeHtml(userId)}</h1>${messages.length ? `<table class="inbox">${rows}</table>` : '<p class="empty">No messages.</p>'}`,
    true,
  );
}

/** Top-level headers (unfolded) and the body of a raw RFC 5322 message. */
export function splitMessage(raw: string): { headers: Map<string, string>; body: string } {
  const sep = /\r?\n\r?\n/.exec(raw);
  const head = sep ? raw.slice(0, sep.index) : raw;
  const body = sep ? raw.slice(sep.index + sep[0].length) : '';
  const headers = new Map<string, string>();
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const i = line.indexOf(':');
    if (i > 0) headers.set(line.slice(0, i).trim().toLowerCase(), line.slice(i + 1).trim());
  }
  return { headers, body };
}

function messagePage(id: string, raw: string, listedDate: string | number | undefined): string {
  const { headers, body } = splitMessage(raw);
  const h = (k: string) => escapeHtml(headers.get(k) ?? '');
  return page(
    headers.get('subject') ?? 'Message',
    `<p><a href="/mail">← Inbox</a></p>
<article class="message" data-message-id="${escapeHtml(id)}">
<h1 class="subject">${h('subject') || '(no subject)'}</h1>
<dl class="headers"><dt>From</dt><dd class="from">${h('from')}</dd><dt>To</dt><dd class="to">${h('to')}</dd><dt>Date</dt><dd class="date">${escapeHtml(headers.get('date') ?? formatDate(listedDate))}</dd></dl>
<pre class="body" data-content-type="${h('content-type') || 'text/plain'}">${escapeHtml(body)}</pre>
</article>`,
    true,
  );
}
