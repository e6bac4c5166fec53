// The status line of one message, as the viewer frame draws it on the user's
// security background (lib/security-background.ts): the outcome's sentence,
// coloured by outcome (green only for decrypted-and-verified).
import type { DecryptResult } from '../lib/decrypt.js';

function tone(r: DecryptResult): 'ok' | 'warn' | 'bad' | 'info' {
  if (r.status === 'locked') return 'warn';
  if (r.status === 'not-for-this-key') return 'info';
  if (r.status !== 'decrypted' && r.status !== 'verified-only') return 'bad';
  if (r.signature.status === 'invalid') return 'bad';
  return r.signature.status === 'valid' ? 'ok' : 'warn';
}

const LOCKED_HINT = ' Click the extension icon, enter your passphrase, and this message decrypts by itself.';

export function renderStatus(el: HTMLElement, summary: HTMLElement, r: DecryptResult): void {
  el.className = tone(r);
  el.dataset.status = r.status;
  el.dataset.signature = r.signature.status;
  summary.textContent = `OpenPGP: ${r.summary}${r.status === 'locked' ? LOCKED_HINT : ''}`;
  el.hidden = false;
}
