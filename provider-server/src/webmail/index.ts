// Demo webmail at /mail: token login, inbox, message view showing the raw
// (still encrypted) body. Server-rendered HTML with no scripts at all, so the
// extension's content script (extension/content/adapters/demo-webmail.ts) is
// the only code that ever sees plaintext. The DOM contract that adapter relies
// on is the set of class names and data-* attributes below; keep them stable.
import type http from 'node:http';

export type Folder = 'inbox' | 'junk';

export interface WebmailSource {
  /** The user a bearer token belongs to (compare tokens in constant time). */
  authenticate(token: string): Promise<string | undefined>;
  /** A folder's messages, or all of them (with their folder) when none is given. */
  listMessages(
    userId: string,
    folder?: Folder,
  ): Promise<{ id: string; from: string; subject: string; date: string | number; folder?: Folder }[]>;
  /** A message; `raw` is missing once its body is no longer kept (the store's retention period). */
  getMessage(userId: string, id: string): Promise<{ raw?: string } | undefined>;
  /** Moves a message (the extension moves spam to Junk); false if the user has no such message. */
  moveMessage(userId: string, id: string, folder: Folder): Promise<boolean>;
  /** A fresh bearer token for the extension's one-click connect, or undefined when the user asked for too many this minute. */
  issueToken(userId: string): Promise<string | undefined>;
}

const FOLDER_NAMES: Record<Folder, string> = { inbox: 'Inbox', junk: 'Junk' };

export type WebmailHandler = (req: http.IncomingMessage, res: http.ServerResponse) => boolean;

const COOKIE = 'pmf_mail';
const MAX_FORM_BYTES = 4096;
const PAGE_CSP =
  "default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export interface WebmailOptions {
  /**
   * Whether the request came over TLS (directly or through a trusted
   * proxy): the session cookie, a bearer token, is then `Secure`, so the
   * browser never sends it over plain HTTP.
   */
  secure?(req: http.IncomingMessage): boolean;
}

/** The session cookie's attributes: never readable by scripts, never sent by other sites, over TLS only when served so. */
function cookie(value: string, secure: boolean, extra = ''): string {
  return `${COOKIE}=${value}; Path=/mail;${extra} HttpOnly; SameSite=Strict${secure ? '; Secure' : ''}`;
}

export function createWebmailHandler(source: WebmailSource, opts: WebmailOptions = {}): WebmailHandler {
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== '/mail' && !url.pathname.startsWith('/mail/')) return false;
    const secure = opts.secure?.(req) ?? false;
    // Never echo internals (message ids, tokens) into an error page.
    route(source, req, res, url, secure).catch(() => {
      if (!res.headersSent) send(res, 500, page('Error', '<p class="error">Something went wrong.</p>'));
      else res.end();
    });
    return true;
  };
}

async function route(
  source: WebmailSource,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  url: URL,
  secure: boolean,
): Promise<void> {
  if (url.pathname === '/mail/login' && req.method === 'POST')
    return readForm(req, res, async (form) => {
      const token = form.get('token')?.trim() ?? '';
      if (!token || !(await source.authenticate(token))) return redirect(res, '/mail?failed=1');
      redirect(res, '/mail', cookie(encodeURIComponent(token), secure));
    });
  if (url.pathname === '/mail/extension-token' && req.method === 'POST') return extensionToken(source, req, res);
  const move = /^\/mail\/m\/([^/]{1,600})\/move$/.exec(url.pathname);
  if (move && req.method === 'POST') return moveMessage(source, req, res, safeDecode(move[1]));
  if (url.pathname === '/mail/logout') return redirect(res, '/mail', cookie('', secure, ' Max-Age=0;'));
  if (req.method !== 'GET' && req.method !== 'HEAD')
    return send(res, 405, page('Method not allowed', '<p class="error">Method not allowed.</p>'));

  const userId = await userFromCookie(source, req);
  if (!userId) return send(res, url.pathname === '/mail' ? 200 : 401, loginPage(url.searchParams.has('failed')));
  if (url.pathname === '/mail' || url.pathname === '/mail/')
    return send(res, 200, inboxPage('inbox', await source.listMessages(userId, 'inbox')));
  if (url.pathname === '/mail/junk')
    return send(res, 200, inboxPage('junk', await source.listMessages(userId, 'junk')));
  const m = /^\/mail\/m\/([^/]{1,600})$/.exec(url.pathname);
  if (m) {
    const id = safeDecode(m[1]);
    const msg = id === undefined ? undefined : await source.getMessage(userId, id);
    if (id === undefined || !msg)
      return send(
        res,
        404,
        page('Not found', '<p class="error">No such message.</p><p><a href="/mail">Back to inbox</a></p>'),
      );
    const listed = (await source.listMessages(userId)).find((x) => x.id === id);
    if (msg.raw === undefined)
      return send(
        res,
        200,
        page(
          'Message',
          `${folderNav(listed?.folder ?? 'inbox')}<p class="gone">This message is no longer kept here: messages are kept for a while only.</p><p><a href="/mail">Back to inbox</a></p>`,
          true,
        ),
      );
    return send(res, 200, messagePage(id, msg.raw, listed?.date, listed?.folder ?? 'inbox'));
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

/** Reads a small urlencoded form body (the login and move forms), refusing large ones. */
function readForm(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  then: (form: URLSearchParams) => Promise<void>,
): Promise<void> {
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
  return new Promise((resolve, reject) => {
    req.on('end', () => {
      if (!tooBig) then(new URLSearchParams(body)).then(resolve, reject);
    });
    req.on('close', () => {
      if (tooBig && !res.headersSent) send(res, 413, page('Too large', '<p class="error">Request too large.</p>'));
      resolve();
    });
  });
}

/**
 * POST /mail/extension-token: a fresh token for the logged-in user, so the
 * extension connects with one click and nobody copies tokens. The session
 * cookie is SameSite=Strict and the answer is JSON (not readable cross-origin),
 * so only the webmail's own pages and the extension's content script get it.
 */
async function extensionToken(
  source: WebmailSource,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  const userId = await userFromCookie(source, req);
  if (!userId) return send(res, 401, loginPage(false));
  const token = await source.issueToken(userId);
  res.writeHead(token ? 200 : 429, {
    'content-type': 'application/json',
    'cache-control': 'no-store',
    'x-content-type-options': 'nosniff',
  });
  res.end(JSON.stringify(token ? { token } : { error: 'too many connections this minute; try again in a minute' }));
}

/** POST /mail/m/<id>/move, folder=junk|inbox: the session cookie is SameSite=Strict, so other sites cannot. */
async function moveMessage(
  source: WebmailSource,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  id: string | undefined,
): Promise<void> {
  const userId = await userFromCookie(source, req);
  if (!userId) return send(res, 401, loginPage(false));
  return readForm(req, res, async (form) => {
    const folder = form.get('folder');
    if (folder !== 'junk' && folder !== 'inbox')
      return send(res, 400, page('Bad request', '<p class="error">Unknown folder.</p>'));
    if (id === undefined || !(await source.moveMessage(userId, id, folder)))
      return send(res, 404, page('Not found', '<p class="error">No such message.</p>'));
    redirect(res, `/mail/m/${encodeURIComponent(id)}`);
  });
}

async function userFromCookie(source: WebmailSource, req: http.IncomingMessage): Promise<string | undefined> {
  for (const part of (req.headers.cookie ?? '').split(';')) {
    const [name, ...rest] = part.trim().split('=');
    if (name === COOKIE) {
      const token = safeDecode(rest.join('='));
      return token === undefined ? undefined : source.authenticate(token);
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

function folderNav(current: Folder): string {
  return `<nav class="folders">${(['inbox', 'junk'] as const)
    .map((f) =>
      f === current
        ? `<strong>${FOLDER_NAMES[f]}</strong>`
        : `<a href="${f === 'inbox' ? '/mail' : '/mail/junk'}">${FOLDER_NAMES[f]}</a>`,
    )
    .join(' · ')}</nav>`;
}

function inboxPage(folder: Folder, messages: Awaited<ReturnType<WebmailSource['listMessages']>>): string {
  const rows = messages
    .map(
      (m) =>
        `<tr class="message-row" data-message-id="${escapeHtml(m.id)}"><td class="from">${escapeHtml(m.from)}</td>` +
        `<td class="subject"><a href="/mail/m/${encodeURIComponent(m.id)}">${escapeHtml(m.subject || '(no subject)')}</a></td><td class="date">${escapeHtml(formatDate(m.date))}</td></tr>`,
    )
    .join('\n');
  return page(
    'Inbox',
    `${folderNav(folder)}<h1>${FOLDER_NAMES[folder]}</h1>${messages.length ? `<table class="inbox" data-folder="${folder}">${rows}</table>` : '<p class="empty">No messages.</p>'}`,
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

function messagePage(id: string, raw: string, listedDate: string | number | undefined, folder: Folder): string {
  const other: Folder = folder === 'junk' ? 'inbox' : 'junk';
  const { headers, body } = splitMessage(raw);
  const h = (k: string) => escapeHtml(headers.get(k) ?? '');
  return page(
    headers.get('subject') ?? 'Message',
    `${folderNav(folder)}
<form class="move" method="post" action="/mail/m/${encodeURIComponent(id)}/move"><input type="hidden" name="folder" value="${other}"><button type="submit">${other === 'junk' ? 'Move to Junk' : 'Not spam: move to Inbox'}</button></form>
<article class="message" data-message-id="${escapeHtml(id)}" data-folder="${folder}">
<h1 class="subject">${h('subject') || '(no subject)'}</h1>
<dl class="headers"><dt>From</dt><dd class="from">${h('from')}</dd><dt>To</dt><dd class="to">${h('to')}</dd><dt>Date</dt><dd class="date">${escapeHtml(headers.get('date') ?? formatDate(listedDate))}</dd></dl>
<pre class="body" data-content-type="${h('content-type') || 'text/plain'}">${escapeHtml(body)}</pre>
</article>`,
    true,
  );
}
