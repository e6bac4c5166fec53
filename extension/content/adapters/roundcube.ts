// Roundcube 1.6 (elastic skin). A message is shown either in the same-origin
// preview frame of the three-pane view (`iframe#messagecontframe`,
// `_action=preview`; the content script runs in all frames) or on its own
// page (`_action=show`); both put the body in `#messagebody` and name the
// message in their URL (`_uid`, `_mbox`). Roundcube does not show PGP/MIME
// bodies (only an `encrypted.asc` attachment), the provider's id is a header
// the page does not show, and it may show the sender's name without the
// address the signer is checked against, so the raw message is read from
// `_action=viewsource` through the background (only of the tab's own site,
// with the user's session). Spam goes to Junk through Roundcube's own
// `_action=move` with the page's request token. One-click connect asks the
// provider's Roundcube plugin (`_action=plugin.pmf_connect`) for a token.
import { headerValue } from '../../../mail/headers.js';
import { providerIdOf } from '../../../mail/message-id.js';
import { fromHeader } from '../../../mail/signer.js';
import { ask } from '../../lib/rpc.js';
import { type LoadedMessage, type MailFolder, type MessageView, type WebmailAdapter } from './adapter.js';

/** Where each view's message is now (a move changes its folder and its uid); kept out of the page's DOM. */
const where = new WeakMap<HTMLElement, { mbox: string; uid?: string; junk: string; providerId?: string }>();

/** A value of the page's `rcmail.set_env({...})` (inline script), as Roundcube's own scripts read it. */
function env(doc: Document, key: 'request_token' | 'junk_mailbox' | 'pmf_connect'): string | undefined {
  for (const s of doc.querySelectorAll('script:not([src])')) {
    const m = new RegExp(`"${key}":"([^"\\\\]{1,200})"`).exec(s.textContent ?? '');
    if (m) return m[1];
  }
  return undefined;
}

/** The direct text of an element, without Roundcube's screen-reader labels and buttons inside it. */
const ownText = (el: Element | null) =>
  el
    ? [...el.childNodes]
        .filter((n) => n.nodeType === 3)
        .map((n) => n.textContent)
        .join(' ')
        .replace(/\s+/g, ' ')
        .trim()
    : '';
const text = (doc: Document, sel: string) => doc.querySelector(sel)?.textContent?.replace(/\s+/g, ' ').trim() ?? '';

/** Roundcube's script URL (`/mail/?_task=mail…` → `/mail/`), for its actions. */
const base = (url: URL) => new URL(url.pathname, url.origin);

/**
 * One of Roundcube's own AJAX actions in the user's session (`_remote=1`, the request token as its
 * scripts send it); returns the commands of its JSON reply. A refused request is "Invalid Request"
 * (bad token) or a reply whose commands show an error.
 */
async function roundcubeAction(
  script: URL,
  token: string,
  action: string,
  method: 'GET' | 'POST',
  params: Record<string, string>,
): Promise<string> {
  const url = new URL(script);
  const query = new URLSearchParams({ _task: 'mail', _action: action, _remote: '1' });
  const body = new URLSearchParams(params);
  url.search = method === 'GET' ? `${query}&${body}` : query.toString();
  const r = await fetch(url, {
    method,
    body: method === 'POST' ? body : undefined,
    headers: { 'X-Roundcube-Request': token },
    credentials: 'same-origin',
  });
  const answer = r.ok ? await r.text() : '';
  let exec: unknown;
  try {
    exec = (JSON.parse(answer) as { exec?: unknown }).exec;
  } catch {
    exec = undefined;
  }
  if (typeof exec !== 'string' || /"error"/.test(exec))
    throw new Error(`Roundcube refused the ${action} (HTTP ${r.status}${answer ? `: ${answer.slice(0, 200)}` : ''}).`);
  return exec;
}

/** The uid of the one message in mbox carrying the provider's id (Roundcube's own search, headers included). */
async function findUid(script: URL, token: string, mbox: string, providerId: string | undefined): Promise<string> {
  if (!providerId) throw new Error('Open the message from its folder to move it.');
  const exec = await roundcubeAction(script, token, 'search', 'GET', {
    _q: providerId,
    _headers: 'text',
    _mbox: mbox,
    _scope: 'base',
    _filter: 'ALL',
  });
  const uids = [...exec.matchAll(/add_message_row\((\d+),/g)].map((m) => m[1]);
  if (uids.length !== 1) throw new Error(`Open the message from its folder to move it (${uids.length} found).`);
  return uids[0];
}

/**
 * The uid of a message list row: Roundcube names it `rcmrow` + the uid in unpadded base64url
 * (`html_identifier(uid, true)`: uid 12 is `rcmrowMTI`); undefined for rows of other kinds.
 */
function rowUid(id: string): string | undefined {
  const b64 = /^rcmrow([A-Za-z0-9_-]{1,16})$/.exec(id)?.[1];
  if (!b64) return undefined;
  let uid: string;
  try {
    uid = atob(
      b64
        .replace(/-/g, '+')
        .replace(/_/g, '/')
        .padEnd(Math.ceil(b64.length / 4) * 4, '='),
    );
  } catch {
    return undefined;
  }
  return /^\d{1,10}$/.test(uid) ? uid : undefined;
}

export const roundcube: WebmailAdapter = {
  name: 'roundcube',
  matches: (doc) =>
    (doc.body?.classList.contains('task-mail') ?? false) &&
    doc.querySelector('#messagebody, #messagelist') !== null &&
    env(doc, 'request_token') !== undefined,
  findMessages(doc, url) {
    const body = doc.querySelector<HTMLElement>('#messagebody');
    const uid = url.searchParams.get('_uid');
    const mbox = url.searchParams.get('_mbox');
    const action = url.searchParams.get('_action');
    if (!body || !uid || !mbox || (action !== 'preview' && action !== 'show')) return [];
    if (!where.has(body)) where.set(body, { mbox, uid, junk: env(doc, 'junk_mailbox') ?? 'Junk' });
    const permalink = new URL(base(url));
    permalink.search = new URLSearchParams({ _task: 'mail', _action: 'show', _uid: uid, _mbox: mbox }).toString();
    return [
      {
        source: {
          id: `${base(url).href}#${mbox}/${uid}`,
          url: permalink.href,
          from: text(doc, '#message-header td.header.from'),
          to: text(doc, '#message-header td.header.to'),
          subject: ownText(doc.querySelector('#message-header h2.subject')),
          date: text(doc, '#message-header td.header.date'),
        },
        body,
        text: body.textContent ?? '',
      },
    ];
  },
  listedSubjects(doc, url) {
    const mbox = url.searchParams.get('_mbox') ?? 'INBOX';
    return [...doc.querySelectorAll<HTMLElement>('#messagelist tr[id^="rcmrow"]')].flatMap((row) => {
      const uid = rowUid(row.id);
      const cell = row.querySelector<HTMLElement>('td.subject span.subject');
      return uid && cell ? [{ sourceId: `${base(url).href}#${mbox}/${uid}`, cell }] : [];
    });
  },
  async loadMessage(view): Promise<LoadedMessage> {
    const at = where.get(view.body);
    if (!at?.uid) throw new Error('This message has moved; open it again.');
    const src = new URL(view.source.url);
    src.search = new URLSearchParams({ _task: 'mail', _action: 'viewsource', _uid: at.uid, _mbox: at.mbox }).toString();
    const raw = await ask<string>({ type: 'fetch-page', url: src.href });
    at.providerId = providerIdOf(raw);
    // The page may show only the sender's name: the signer is checked against the raw From.
    const from = fromHeader(raw);
    // And a date in its own words ("Today 10:32"): the message is indexed under the raw Date.
    const date = headerValue(raw, 'date');
    const headers = {
      ...(from ? { from } : {}),
      ...(date && Number.isFinite(Date.parse(date)) ? { date } : {}),
    };
    return { text: raw, providerId: at.providerId, headers };
  },
  folderOf(view) {
    const at = where.get(view.body);
    if (!at) return undefined;
    if (at.mbox === 'INBOX') return 'inbox';
    return at.mbox === at.junk ? 'junk' : undefined;
  },
  async moveTo(view: MessageView, folder: MailFolder) {
    const at = where.get(view.body);
    if (!at) throw new Error('This message is not on this page any more.');
    const token = env(document, 'request_token');
    if (!token) throw new Error('Roundcube gave this page no request token: log in again.');
    const script = base(new URL(view.source.url));
    // Roundcube's move does not say the message's new uid: after one, find it again by the provider's id.
    const uid = at.uid ?? (await findUid(script, token, at.mbox, at.providerId));
    const target = folder === 'junk' ? at.junk : 'INBOX';
    await roundcubeAction(script, token, 'move', 'POST', {
      _uid: uid,
      _mbox: at.mbox,
      _target_mbox: target,
      _token: token,
    });
    where.set(view.body, { ...at, mbox: target, uid: undefined });
  },
  connectOffer(doc, url) {
    // On the mailbox view (not in the preview frame), where the provider's plugin says it is installed
    // (provider-server/roundcube-plugin/pmf_connect). The answer, not this page, names the provider.
    const token = env(doc, 'request_token');
    if (!token || env(doc, 'pmf_connect') !== 'available' || !doc.querySelector('#messagelist')) return undefined;
    const action = base(url);
    action.search = new URLSearchParams({ _task: 'mail', _action: 'plugin.pmf_connect', _remote: '1' }).toString();
    return {
      at: doc.querySelector('#messagelist')?.closest('.scroller') ?? doc.body, // above the list, under its header
      // The plugin answers the extension's background only (its Origin), never this page's scripts.
      fromBackground: { action: action.href, requestToken: token },
    };
  },
};
