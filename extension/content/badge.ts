// The in-page UI for one message: a status badge (in a shadow root, so page
// styles do not leak in) and, once decrypted, an extension frame showing the
// plaintext. The webmail page never gets the plaintext in its own DOM.
import browser from 'webextension-polyfill';
import type { BadgeInfo } from '../lib/messages.js';

const STYLE = `
.badge{font:13px system-ui,sans-serif;border-radius:6px;padding:8px 10px;margin:8px 0;border:1px solid}
.ok{background:#e7f6ea;border-color:#3a8f4b;color:#1d5228}.warn{background:#fff6dc;border-color:#c9a227;color:#5c4700}
.bad{background:#fde8e8;border-color:#c0392b;color:#7b1d12}.info{background:#eef1f5;border-color:#8a99ad;color:#2c3a4d}
button{font:12px system-ui,sans-serif;margin-left:8px}iframe{width:100%;border:1px solid #ccc;border-radius:6px;min-height:80px}`;

/** Colour class per outcome: green only for a verified signature by the key of the From address. */
function tone(info: BadgeInfo): string {
  if (info.status === 'locked') return 'warn';
  if (info.status === 'not-for-this-key') return 'info';
  if (info.status !== 'decrypted' && info.status !== 'verified-only') return 'bad';
  if (info.signature.status === 'invalid') return 'bad';
  return info.signature.status === 'valid' && info.signature.fromMatches !== false ? 'ok' : 'warn';
}

const LOCKED_HINT = ' Click the extension icon, enter your passphrase, and this message decrypts by itself.';

export function renderBadge(body: HTMLElement, info: BadgeInfo): HTMLElement {
  body.parentElement?.querySelector(':scope > .pmf-host')?.remove();
  const host = document.createElement('div');
  host.className = 'pmf-host';
  const root = host.attachShadow({ mode: 'open' });
  const style = document.createElement('style');
  style.textContent = STYLE;
  const badge = document.createElement('div');
  badge.className = `badge ${tone(info)}`;
  badge.dataset.status = info.status;
  badge.dataset.signature = info.signature.status;
  badge.setAttribute('role', 'status');
  badge.textContent = `OpenPGP: ${info.summary}${info.status === 'locked' ? LOCKED_HINT : ''}`;
  root.append(style, badge);

  if (info.viewId) {
    const frame = document.createElement('iframe');
    frame.src = browser.runtime.getURL(`viewer.html?v=${encodeURIComponent(info.viewId)}`);
    frame.title = 'Decrypted message';
    window.addEventListener('message', (ev) => {
      const h = (ev.data as { pmfViewerHeight?: unknown } | null)?.pmfViewerHeight;
      if (ev.source === frame.contentWindow && typeof h === 'number' && h > 0 && h < 100_000)
        frame.style.height = `${Math.ceil(h) + 4}px`;
    });
    const toggle = document.createElement('button');
    toggle.textContent = 'Show encrypted original';
    toggle.addEventListener('click', () => {
      body.hidden = !body.hidden;
      toggle.textContent = body.hidden ? 'Show encrypted original' : 'Hide encrypted original';
    });
    badge.append(toggle);
    root.append(frame);
    body.hidden = true;
  } else {
    body.hidden = false;
  }
  body.before(host);
  return host;
}
