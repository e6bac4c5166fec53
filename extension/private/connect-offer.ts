// Content script side of one-click connect: on a logged-in webmail page whose
// adapter offers it, and while the extension is not connected, a bar offers to
// turn on the private spam check. The token (and, for a webmail that is not
// the provider's own, the provider's origin) comes from the webmail's server
// in the user's session, to the background: Roundcube's plugin answers the
// background's own request only (its extension Origin), the demo webmail a
// same-origin request of this script. The page's scripts never see it, and
// nothing in the page's DOM chooses it.
// The bar is in a closed shadow root, as all the extension's UI in a page:
// the page's scripts can neither click it nor change what it says.
import browser from 'webextension-polyfill';
import type { WebmailAdapter } from '../content/adapters/adapter.js';
import { WEBMAIL_CONNECT, type WebmailConnectRequest } from './messages.js';

const STYLE = `.bar{font:13px system-ui,sans-serif;background:#eef1f5;border:1px solid #8a99ad;border-radius:6px;padding:8px 10px;margin:8px 0}
button{font:12px system-ui,sans-serif;margin-left:8px}.bar[data-state=error]{background:#fde8e8;border-color:#c0392b}`;

type Reply = { ok: boolean; value?: unknown; error?: string } | undefined;
const ask = (req: WebmailConnectRequest): Promise<Reply> => browser.runtime.sendMessage(req) as Promise<Reply>;

export async function offerOneClickConnect(adapter: WebmailAdapter, doc: Document, url: URL): Promise<void> {
  const offer = adapter.connectOffer?.(doc, url);
  if (!offer || doc.querySelector('.pmf-connect')) return;
  const host = doc.createElement('div');
  host.className = 'pmf-connect';
  offer.at.prepend(host); // placed first, so a second scan sees it
  // Not offered: an empty host stays, as removing it would rescan the page (a DOM change) and ask again.
  if ((await ask({ [WEBMAIL_CONNECT]: 'offer' }))?.value !== true) return void (host.hidden = true);
  const root = host.attachShadow({ mode: 'closed' });
  const bar = Object.assign(doc.createElement('div'), { className: 'bar' });
  const label = Object.assign(doc.createElement('span'), {
    textContent: 'Let your provider check your encrypted mail for spam without reading it.',
  });
  const button = Object.assign(doc.createElement('button'), {
    type: 'button',
    textContent: 'Turn on private spam check',
  });
  bar.append(label, button);
  root.append(Object.assign(doc.createElement('style'), { textContent: STYLE }), bar);
  button.addEventListener('click', async (ev) => {
    if (!ev.isTrusted) return; // only the user's own click, never the page's scripts
    button.disabled = true;
    label.textContent = 'Connecting and fetching the spam model…';
    try {
      const reply = offer.fromBackground
        ? await ask({ [WEBMAIL_CONNECT]: 'roundcube', ...offer.fromBackground })
        : await ask({ [WEBMAIL_CONNECT]: 'connect', ...(await offer.issueToken!()) });
      if (!reply?.ok) throw new Error(reply?.error ?? 'The extension background did not answer.');
      bar.dataset.state = 'done';
      label.textContent = `Connected to ${String(reply.value)}: messages you open are now checked for spam privately.`;
      button.remove();
    } catch (e) {
      bar.dataset.state = 'error';
      label.textContent = (e as Error).message;
      button.disabled = false;
    }
  });
}
