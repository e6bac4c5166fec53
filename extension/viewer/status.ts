// The status line of one message, as the viewer frame draws it on the user's
// security background (lib/security-background.ts): the outcome's sentence
// (lib/decrypt.ts: the certified signer, when it signed, its key's
// fingerprint, and whether the From address is the signer's), coloured by
// outcome: green only for decrypted or signed content with a verified
// signature by the key of the From address.
import type { DecryptResult } from '../lib/decrypt.js';
import { t } from '../lib/i18n.js';

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
    decrypted: t('status_decrypted'),
    'verified-only': t('status_not_encrypted'),
    locked: t('status_locked'),
    'not-for-this-key': t('status_not_for_you'),
    malformed: t('status_damaged'),
    'too-large': t('status_too_large'),
    failed: t('status_damaged'),
  }[r.status];
  if (r.status !== 'decrypted' && r.status !== 'verified-only') return outcome;
  const signature = {
    valid: r.signature.fromMatches === false ? t('status_sender_forged') : t('status_signature_verified'),
    invalid: t('status_signature_untrusted'),
    'unknown-signer': t('status_signer_unknown'),
    unsigned: t('status_not_signed'),
  }[r.signature.status];
  return t('status_with_signature', outcome, signature);
}

export function renderStatus(el: HTMLElement, summary: HTMLElement, r: DecryptResult): void {
  el.className = tone(r);
  el.dataset.status = r.status;
  el.dataset.signature = r.signature.status;
  summary.textContent = t(r.status === 'locked' ? 'viewer_locked_hint' : 'viewer_summary', r.summary);
  el.setAttribute('aria-label', t('status_name', stateWords(r)));
  el.hidden = false;
}

/** After a lock or expiry wiped the message: the status says so, and no longer vouches for a sender. */
export function renderWiped(el: HTMLElement, summary: HTMLElement): void {
  el.className = 'warn';
  el.dataset.status = 'locked';
  el.dataset.signature = 'unsigned';
  summary.textContent = t('viewer_wiped');
  el.setAttribute('aria-label', t('status_hidden_again'));
  el.hidden = false;
}
