// The status line of one message, as the viewer frame draws it on the user's
// security background (lib/security-background.ts): the outcome's sentence
// (lib/decrypt.ts: the certified signer, when it signed, its key's
// fingerprint, and whether the From address is the signer's), coloured by
// outcome: green only for decrypted or signed content with a verified
// signature by the key of the From address.
import type { DecryptResult } from '../lib/decrypt.js';

function tone(r: DecryptResult): 'ok' | 'warn' | 'bad' | 'info' {
  if (r.status === 'locked') return 'warn';
  if (r.status === 'not-for-this-key') return 'info';
  if (r.status !== 'decrypted' && r.status !== 'verified-only') return 'bad';
  if (r.signature.status === 'invalid') return 'bad'; // a revoked signing key included
  // A valid signature under someone else's From (a replayed message) is amber: the sender may be forged.
  return r.signature.status === 'valid' && r.signature.fromMatches !== false ? 'ok' : 'warn';
}

/**
 * The outcome in a few words, the status line's accessible name: screen readers say it where the eye reads
 * the colour, and the sentence follows.
 */
function stateWords(r: DecryptResult): string {
  const outcome = {
    decrypted: 'decrypted',
    'verified-only': 'not encrypted',
    locked: 'locked',
    'not-for-this-key': 'not encrypted to your keys',
    malformed: 'damaged',
    'too-large': 'too large',
    failed: 'damaged',
  }[r.status];
  if (r.status !== 'decrypted' && r.status !== 'verified-only') return outcome;
  const signature = {
    valid: r.signature.fromMatches === false ? 'sender may be forged' : 'signature verified',
    invalid: 'signature not trusted',
    'unknown-signer': 'signer unknown',
    unsigned: 'not signed',
  }[r.signature.status];
  return `${outcome}, ${signature}`;
}

const LOCKED_HINT = ' Click the extension icon, enter your passphrase, and this message decrypts by itself.';

export function renderStatus(el: HTMLElement, summary: HTMLElement, r: DecryptResult): void {
  el.className = tone(r);
  el.dataset.status = r.status;
  el.dataset.signature = r.signature.status;
  summary.textContent = `OpenPGP: ${r.summary}${r.status === 'locked' ? LOCKED_HINT : ''}`;
  el.setAttribute('aria-label', `Message status: ${stateWords(r)}`);
  el.hidden = false;
}

/** After a lock or expiry wiped the message: the status says so, and no longer vouches for a sender. */
export function renderWiped(el: HTMLElement, summary: HTMLElement): void {
  el.className = 'warn';
  el.dataset.status = 'locked';
  el.dataset.signature = 'unsigned';
  summary.textContent =
    'OpenPGP: Your keys were locked, so this message is hidden again. Unlock them and reload the page to read it.';
  el.setAttribute('aria-label', 'Message status: locked, hidden again');
  el.hidden = false;
}
