// Message display script (registered by the background in Thunderbird): a
// banner above every OpenPGP message with its status and signature, so the
// user need not open the "OpenPGP status" popup per message. When
// Thunderbird could not decrypt the message itself (the key is only in the
// add-on: Thunderbird shows a red bar and an empty pane), the banner also
// shows the decrypted text.
import { toPlain } from '../lib/plain-error.js';
import { onKeysLocked } from '../lib/lock-signal.js';
import { ask } from '../lib/rpc.js';
import type { DisplayedMessageReport } from './displayed-message.js';
import { PATH_TEXT, tone } from './report-view.js';

const LOCKED_TEXT =
  'Your keys were locked, so the decrypted text is hidden again. Unlock them and open the message again to read it.';
const COLORS = { ok: '#1d6b2c', warn: '#8a5a00', error: '#a00', info: '#444' };
const STYLE = `.banner{font:13px system-ui,sans-serif;border:1px solid #8a99ad;background:#eef1f5;border-radius:6px;padding:8px 10px;margin:8px 0}
pre{white-space:pre-wrap;overflow-wrap:anywhere;font:13px/1.4 system-ui,sans-serif;margin:8px 0 0}p{margin:0}`;

function render(kind: keyof typeof COLORS, lines: string[], text?: string): void {
  const host = document.createElement('div');
  host.className = 'pmf-banner';
  const root = host.attachShadow({ mode: 'open' });
  const banner = Object.assign(document.createElement('div'), { className: 'banner' });
  banner.dataset.kind = kind;
  for (const line of lines.filter(Boolean))
    banner.append(Object.assign(document.createElement('p'), { textContent: line }));
  (banner.firstChild as HTMLElement).style.color = COLORS[kind];
  if (text) {
    const pre = Object.assign(document.createElement('pre'), { textContent: text });
    banner.append(pre);
    onKeysLocked(() => pre.replaceWith(Object.assign(document.createElement('p'), { textContent: LOCKED_TEXT })));
  }
  root.append(Object.assign(document.createElement('style'), { textContent: STYLE }), banner);
  document.body.prepend(host);
}

async function show(): Promise<void> {
  const r = await ask<DisplayedMessageReport>({ type: 'tb-this-message' });
  if (r.path === 'plain') return;
  // Thunderbird already shows text it decrypted; add ours only when it could not, or when the block is
  // only part of the message: then the banner shows which text its verdict is about.
  const shown = !r.partial && r.text !== undefined && document.body.textContent!.includes(r.text.trim().slice(0, 60));
  render(tone(r), [r.summary, PATH_TEXT[r.path]], shown ? undefined : r.text);
}

show().catch((e) => render('error', [`Private Mail Functions: ${toPlain(e).message}`]));
