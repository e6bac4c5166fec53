// Message display script (registered by the background in Thunderbird): a
// banner above every OpenPGP message with its status and signature, so the
// user need not open the "OpenPGP status" popup per message. When
// Thunderbird could not decrypt the message itself (the key is only in the
// add-on: Thunderbird shows a red bar and an empty pane), the banner also
// shows the decrypted text, its protected subject and its attachments, and
// says why Thunderbird's bar disagrees. It says why a message is in Junk
// (the private spam check, or a blocklist hit with its list and date), and a
// message that waits for the key has an Unlock button (the settings page
// opens at its unlock form; the banner reads the message again after it).
import { toPlain } from '../lib/plain-error.js';
import { onKeysLocked, onKeysUnlocked } from '../lib/lock-signal.js';
import { ask } from '../lib/rpc.js';
import { formatSize } from '../lib/ui.js';
import type { DisplayedMessageReport } from './message-report.js';
import { PATH_TEXT, tone } from './report-view.js';
import { t } from '../lib/i18n.js';

const LOCKED_TEXT = t('tb_banner_locked');
/** Thunderbird's own bar says it cannot decrypt what the add-on did: why both are right. */
const NOT_IN_THUNDERBIRD = t('tb_banner_not_in_thunderbird');
/** Shown while the add-on works on a message that takes a while (a large one, a busy computer). */
const READING_TEXT = t('tb_banner_reading');
const READING_AFTER_MS = 1000;
const COLORS = { ok: '#1d6b2c', warn: '#8a5a00', error: '#a00', info: '#444', pending: '#444' };
const STYLE = `.banner{font:13px system-ui,sans-serif;border:1px solid #8a99ad;background:#eef1f5;border-radius:6px;padding:8px 10px;margin:8px 0}
pre{white-space:pre-wrap;overflow-wrap:anywhere;font:13px/1.4 system-ui,sans-serif;margin:8px 0 0}p{margin:0}
.spam{margin-top:6px;font-weight:600}.subject{font-weight:600;margin-top:6px}ul{margin:6px 0 0;padding-left:18px}
button{font:12px system-ui,sans-serif;margin-top:6px}`;

const el = <K extends keyof HTMLElementTagNameMap>(tag: K, props: object = {}): HTMLElementTagNameMap[K] =>
  Object.assign(document.createElement(tag), props);

interface Extras {
  text?: string;
  subject?: string;
  spam?: string[];
  attachments?: DisplayedMessageReport['attachments'];
  unlock?: boolean;
}

function render(kind: keyof typeof COLORS, lines: string[], extras: Extras = {}): void {
  document.querySelector('.pmf-banner')?.remove();
  const host = el('div', { className: 'pmf-banner' });
  const root = host.attachShadow({ mode: 'open' });
  const banner = el('div', { className: 'banner' });
  banner.dataset.kind = kind;
  for (const line of lines.filter(Boolean)) banner.append(el('p', { textContent: line }));
  (banner.firstChild as HTMLElement).style.color = COLORS[kind];
  for (const line of extras.spam ?? []) banner.append(el('p', { className: 'spam', textContent: line }));
  if (extras.unlock) {
    const button = el('button', { type: 'button', textContent: t('unlock_button') });
    button.addEventListener('click', () => void ask({ type: 'open-unlock' }).catch(() => {}));
    banner.append(button);
  }
  const shown: HTMLElement[] = [];
  if (extras.subject) shown.push(el('p', { className: 'subject', textContent: t('tb_subject', extras.subject) }));
  if (extras.text !== undefined) shown.push(el('pre', { textContent: extras.text }));
  if (extras.attachments?.length) {
    const list = el('ul', { className: 'attachments' });
    for (const a of extras.attachments)
      list.append(el('li', { textContent: t('attachment_line', a.name, a.type, formatSize(a.size)) }));
    shown.push(list);
  }
  banner.append(...shown);
  if (shown.length)
    onKeysLocked(() => {
      for (const e of shown) e.remove();
      banner.append(el('p', { textContent: LOCKED_TEXT }));
    });
  root.append(el('style', { textContent: STYLE }), banner);
  document.body.prepend(host);
}

let watchingUnlock = false;

async function show(): Promise<void> {
  const reading = setTimeout(() => render('pending', [READING_TEXT]), READING_AFTER_MS);
  const r = await ask<DisplayedMessageReport>({ type: 'tb-this-message' }).finally(() => clearTimeout(reading));
  if (r.path === 'plain') return void document.querySelector('.pmf-banner')?.remove();
  // Thunderbird already shows text it decrypted; add ours only when it could not, or when the block is
  // only part of the message: then the banner shows which text its verdict is about.
  const inPane = r.text !== undefined && document.body.textContent!.includes(r.text.trim().slice(0, 60));
  const ours = r.partial || !inPane;
  const lines = [r.summary, PATH_TEXT[r.path]];
  if (r.path === 'extension' && !inPane && r.result?.status === 'decrypted') lines.push(NOT_IN_THUNDERBIRD);
  const locked = r.path === 'none' && r.result?.status === 'locked' && !r.damaged;
  render(tone(r), lines, {
    spam: r.spam,
    unlock: locked,
    ...(ours && r.text !== undefined
      ? { text: r.text, subject: r.listedSubject ? r.subject : undefined, attachments: r.attachments }
      : {}),
  });
  if (locked && !watchingUnlock) {
    watchingUnlock = true;
    onKeysUnlocked(() => void show().catch(() => {}));
  }
}

show().catch((e) => render('error', [t('tb_banner_error', toPlain(e).message)]));
