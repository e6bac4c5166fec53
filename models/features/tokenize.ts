// Tokenization in the spirit of Graham's "Better Bayesian Filtering" (2003):
// words keep inner dashes, apostrophes and dollar signs; header words carry
// their header as a prefix ("subject:free" differs from "free"); URL hosts
// and attachment types become tokens of their own. Everything is
// lower-cased (NFKC) so that case tricks do not split counts.
import type { MessageParts } from '../../mail/mime.js';

const MIN_LEN = 2;
const MAX_LEN = 40;
// A word: letters/digits, optionally joined by ' - $ (e.g. "don't", "e-mail", "$100").
const WORD = /[\p{L}\p{N}$](?:[\p{L}\p{N}'$-]*[\p{L}\p{N}$])?/gu;
const URL_HOST = /\b(?:https?|ftp):\/\/(?:[^\s/?#@<>"']*@)?([^\s/?#:<>"'\\]+)/giu;

export function words(text: string): string[] {
  const out: string[] = [];
  for (const m of text.normalize('NFKC').toLowerCase().matchAll(WORD)) {
    const w = m[0];
    if (w.length >= MIN_LEN && w.length <= MAX_LEN) out.push(w);
  }
  return out;
}

/** Hosts of http/https/ftp links, lower-cased, trailing dots removed. */
export function urlHosts(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(URL_HOST)) {
    const host = m[1].toLowerCase().replace(/\.+$/, '');
    if (host.length > 0 && host.length <= 253) out.push(host);
  }
  return out;
}

/** All tokens of a message, in document order (headers first). */
export function tokenize(parts: MessageParts): string[] {
  const tokens: string[] = [];
  for (const w of words(parts.subject)) tokens.push(`subject:${w}`);
  for (const a of parts.addresses) {
    for (const w of words(a.name)) tokens.push(`${a.header}:${w}`);
    const at = a.address.lastIndexOf('@');
    if (at >= 0) {
      for (const w of words(a.address.slice(0, at))) tokens.push(`${a.header}:${w}`);
      tokens.push(`${a.header}@${a.address.slice(at + 1).toLowerCase()}`);
    }
  }
  for (const t of parts.mimeTypes) tokens.push(`mime:${t.toLowerCase()}`);
  tokens.push(...words(parts.body));
  for (const h of urlHosts(parts.body + '\n' + parts.html)) tokens.push(`url:${h}`);
  return tokens;
}
