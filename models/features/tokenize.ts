// Tokenization in the spirit of Graham's "Better Bayesian Filtering" (2003):
// words keep inner dashes, apostrophes and dollar signs; header words carry
// their header as a prefix ("subject:free" differs from "free"); URL hosts
// and attachment types become tokens of their own. Everything is
// lower-cased (NFKC) so that case tricks do not split counts.
//
// Scripts written without spaces between words (Chinese, Japanese, Thai,
// Lao, Khmer, Myanmar) are split into words by Intl.Segmenter, in pieces of
// SEGMENT_CHARS: its cost grows with the square of the text it is given.
//
// The work is bounded whatever the message: at most MAX_TEXT_CHARS of each
// text are read and at most MAX_TOKENS tokens come out, all through
// generators (no array of a message's words is ever built or spread).
import { MAX_TEXT_CHARS, type MessageParts } from '../../mail/mime.js';

const MIN_LEN = 2;
const MAX_LEN = 40;
/** Tokens of one message, headers included. */
export const MAX_TOKENS = 100_000;
const SEGMENT_CHARS = 128;
// A word: letters/digits (with their combining marks), optionally joined by ' - $ (e.g. "don't", "e-mail", "$100").
const WORD = /[\p{L}\p{N}$](?:[\p{L}\p{M}\p{N}'$-]*[\p{L}\p{M}\p{N}$])?/gu;
const UNSPACED = /[\p{scx=Han}\p{scx=Hiragana}\p{scx=Katakana}\p{scx=Thai}\p{scx=Lao}\p{scx=Khmer}\p{scx=Myanmar}]/u;
const URL_HOST = /\b(?:https?|ftp):\/\/(?:[^\s/?#@<>"']*@)?([^\s/?#:<>"'\\]+)/giu;
const segmenter = new Intl.Segmenter('und', { granularity: 'word' });

/** The words of a run of an unspaced script; a single ideograph is a word. */
function* segmented(run: string): Generator<string> {
  for (let i = 0; i < run.length; i += SEGMENT_CHARS)
    for (const s of segmenter.segment(run.slice(i, i + SEGMENT_CHARS)))
      if (s.isWordLike && s.segment.length <= MAX_LEN) yield s.segment;
}

/** The words of a text in order, from its first MAX_TEXT_CHARS characters. */
export function* wordsOf(text: string): Generator<string> {
  const head = text.length > MAX_TEXT_CHARS ? text.slice(0, MAX_TEXT_CHARS) : text;
  for (const m of head.normalize('NFKC').toLowerCase().matchAll(WORD)) {
    const w = m[0];
    if (UNSPACED.test(w)) yield* segmented(w);
    else if (w.length >= MIN_LEN && w.length <= MAX_LEN) yield w;
  }
}

/** Hosts of http/https/ftp links, lower-cased, trailing dots removed. */
export function* urlHosts(text: string): Generator<string> {
  const head = text.length > MAX_TEXT_CHARS ? text.slice(0, MAX_TEXT_CHARS) : text;
  for (const m of head.matchAll(URL_HOST)) {
    const host = m[1].toLowerCase().replace(/\.+$/, '');
    if (host.length > 0 && host.length <= 253) yield host;
  }
}

function* take<T>(items: Iterable<T>, n: number): Generator<T> {
  if (n <= 0) return;
  for (const x of items) {
    yield x;
    if (--n === 0) return;
  }
}

function* allTokens(parts: MessageParts): Generator<string> {
  for (const w of wordsOf(parts.subject)) yield `subject:${w}`;
  for (const a of parts.addresses) {
    for (const w of wordsOf(a.name)) yield `${a.header}:${w}`;
    const at = a.address.lastIndexOf('@');
    if (at >= 0) {
      for (const w of wordsOf(a.address.slice(0, at))) yield `${a.header}:${w}`;
      yield `${a.header}@${a.address.slice(at + 1).toLowerCase()}`;
    }
  }
  for (const t of parts.mimeTypes) yield `mime:${t.toLowerCase()}`;
  yield* wordsOf(parts.body);
  for (const h of urlHosts(parts.body)) yield `url:${h}`;
  for (const h of urlHosts(parts.html)) yield `url:${h}`;
}

/** The tokens of a message in document order (headers first), at most MAX_TOKENS. */
export function tokens(parts: MessageParts): Generator<string> {
  return take(allTokens(parts), MAX_TOKENS);
}

/** tokens() as an array. */
export function tokenize(parts: MessageParts): string[] {
  return [...tokens(parts)];
}
