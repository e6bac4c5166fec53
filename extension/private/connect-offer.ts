// Content script side of one-click connect: on a logged-in webmail page whose
// adapter offers it, and while the extension is not connected, a bar offers to
// turn on the private spam check, and asks once whether the provider may
// learn each message's topic. The token (and, for a webmail that is not
// the provider's own, the provider's origin) comes from the webmail's server
// in the user's session, to the background: Roundcube's plugin answers the
// background's own request only (its extension Origin), the demo webmail a
// same-origin request of this script. The page's scripts never see it, and
// nothing in the page's DOM chooses it.
// The bar is in a closed shadow root, as all the extension's UI in a page,
// and only the user's own clicks count (isTrusted): the page's scripts can
// neither connect, nor answer the topic question, nor change what it says.
// Once connected, the background has the mailbox's mail checked at once
// (SPAM_CHECK_READY).
import browser from 'webextension-polyfill';
import type { WebmailAdapter } from '../content/adapters/adapter.js';
import { WEBMAIL_CONNECT, type WebmailConnectRequest } from './messages.js';

const STYLE = `.bar{font:13px system-ui,sans-serif;background:#eef1f5;border:1px solid #8a99ad;border-radius:6px;padding:8px 10px;margin:8px 0}
button{font:12px system-ui,sans-serif;margin-left:8px}.bar[data-state=error]{background:#fde8e8;border-color:#c0392b}
fieldset{border:0;margin:6px 0 0;padding:0}legend{padding:0}label{margin-right:12px}`;

type Reply = { ok: boolean; value?: unknown; error?: string } | undefined;
const ask = (req: WebmailConnectRequest): Promise<Reply> => browser.runtime.sendMessage(req) as Promise<Reply>;

function el<K extends keyof HTMLElementTagNameMap>(
  doc: Document,
  tag: K,
  props: object = {},
): HTMLElementTagNameMap[K] {
  return Object.assign(doc.createElement(tag), props);
}

/** The topic question: two choices, none made for the user; the answer counts only from the user's own click. */
function topicQuestion(doc: Document, onAnswer: (share: boolean) => void): HTMLFieldSetElement {
  const set = el(doc, 'fieldset');
  set.append(
    el(doc, 'legend', {
      textContent:
        'Share the topic of each checked message with your provider? It learns only the topic (for example “sports”), never the message.',
    }),
  );
  for (const [value, text] of [
    ['keep', 'Don’t share topics'],
    ['share', 'Share topics'],
  ] as const) {
    const input = el(doc, 'input', { type: 'radio', name: 'pmf-topics', value });
    input.addEventListener('click', (ev) => {
      if (ev.isTrusted) onAnswer(value === 'share');
      else ev.preventDefault(); // the page's scripts do not answer for the user (the choice shown stays theirs)
    });
    const label = el(doc, 'label');
    label.append(input, ` ${text}`);
    set.append(label);
  }
  return set;
}

export async function offerOneClickConnect(adapter: WebmailAdapter, doc: Document, url: URL): Promise<void> {
  const offer = adapter.connectOffer?.(doc, url);
  if (!offer || doc.querySelector('.pmf-connect')) return;
  const host = doc.createElement('div');
  host.className = 'pmf-connect';
  offer.at.prepend(host); // placed first, so a second scan sees it
  // Not offered: an empty host stays, as removing it would rescan the page (a DOM change) and ask again.
  if ((await ask({ [WEBMAIL_CONNECT]: 'offer' }))?.value !== true) return void (host.hidden = true);
  const root = host.attachShadow({ mode: 'closed' });
  const bar = el(doc, 'div', { className: 'bar' });
  bar.setAttribute('role', 'region');
  bar.setAttribute('aria-label', 'Private spam check'); // named, or it is no landmark to screen readers
  const label = el(doc, 'span', {
    textContent: 'Let your provider check your encrypted mail for spam without reading it.',
  });
  label.setAttribute('role', 'status');
  const button = el(doc, 'button', { type: 'button', textContent: 'Turn on private spam check', disabled: true });
  let topics: boolean | undefined;
  const question = topicQuestion(doc, (share) => {
    topics = share;
    button.disabled = false;
  });
  bar.append(label, button, question);
  root.append(el(doc, 'style', { textContent: STYLE }), bar);
  button.addEventListener('click', async (ev) => {
    if (!ev.isTrusted || topics === undefined) return; // only the user's own click, never the page's scripts
    button.disabled = true;
    label.textContent = 'Connecting and fetching the spam model…';
    try {
      const reply = offer.fromBackground
        ? await ask({ [WEBMAIL_CONNECT]: 'roundcube', ...offer.fromBackground, topics })
        : await ask({ [WEBMAIL_CONNECT]: 'connect', ...(await offer.issueToken!()), topics });
      if (!reply?.ok) throw new Error(reply?.error ?? 'Private Mail Functions did not answer. Reload the page.');
      bar.dataset.state = 'done';
      label.textContent = `Connected to ${String(reply.value)}: your mail is now checked for spam privately, starting with what is in this folder.`;
      button.remove();
      question.remove();
    } catch (e) {
      bar.dataset.state = 'error';
      label.textContent = (e as Error).message;
      button.disabled = false;
    }
  });
}
