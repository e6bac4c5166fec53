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
import { t } from '../lib/i18n.js';
import { fillElement } from '../lib/i18n-dom.js';

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
      textContent: t('options_topics_question'),
    }),
  );
  for (const [value, key] of [
    ['keep', 'options_topics_keep'],
    ['share', 'options_topics_share'],
  ] as const) {
    const input = el(doc, 'input', { type: 'radio', name: 'pmf-topics', value });
    input.addEventListener('click', (ev) => {
      if (ev.isTrusted) onAnswer(value === 'share');
      else ev.preventDefault(); // the page's scripts do not answer for the user (the choice shown stays theirs)
    });
    const label = el(doc, 'label');
    label.append(input);
    fillElement(label, key);
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
  bar.setAttribute('aria-label', t('spam_region')); // named, or it is no landmark to screen readers
  const label = el(doc, 'span', {
    textContent: t('connect_offer'),
  });
  label.setAttribute('role', 'status');
  const button = el(doc, 'button', { type: 'button', textContent: t('connect_turn_on'), disabled: true });
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
    label.textContent = t('spam_connecting');
    try {
      const reply = offer.fromBackground
        ? await ask({ [WEBMAIL_CONNECT]: 'roundcube', ...offer.fromBackground, topics })
        : await ask({ [WEBMAIL_CONNECT]: 'connect', ...(await offer.issueToken!()), topics });
      if (!reply?.ok) throw new Error(reply?.error ?? t('connect_no_answer'));
      bar.dataset.state = 'done';
      label.textContent = t('connect_done', String(reply.value));

      button.remove();
      question.remove();
    } catch (e) {
      bar.dataset.state = 'error';
      label.textContent = (e as Error).message;
      button.disabled = false;
    }
  });
}
