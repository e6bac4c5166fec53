// The keywords a message is indexed under at the provider, and those a query
// asks for: lunr 2.3.9's tokenizer and index pipeline (trimmer, stop words,
// Porter stemmer), as the local index (extension/search) uses, so a word
// finds the same mail on every device and in both scopes. A message's
// keywords are its distinct terms of subject, sender, recipients (addresses
// also by their parts) and body, in that order, at most MAX_KEYWORDS.
import lunr from 'lunr';
import { MAX_KEYWORDS } from '../../../protocol/remote-search.js';

/** Longer tokens are base64, armor and hashes (the local index drops them too). */
const MAX_TOKEN_LENGTH = 40;
const SEPARATOR = /[\s-]+/;

const pipeline = new lunr.Pipeline();
pipeline.add(lunr.trimmer, lunr.stopWordFilter, lunr.stemmer);

/**
 * Memo of the pipeline per token: a mailbox reuses a small vocabulary, and
 * the stemmer costs microseconds per word. Bounded; cleared when full.
 */
const MEMO_SIZE = 100_000;
let memo = new Map<string, string | null>();

function term(token: string): string | null {
  let t = memo.get(token);
  if (t !== undefined) return t;
  const out = token.length > MAX_TOKEN_LENGTH ? [] : pipeline.run([new lunr.Token(token, {})]);
  t = out.length > 0 && out[0].toString() !== '' ? out[0].toString() : null;
  if (memo.size >= MEMO_SIZE) memo = new Map();
  memo.set(token, t);
  return t;
}

function addTerms(text: string, into: Set<string>): void {
  for (const token of text.toLowerCase().split(SEPARATOR)) {
    if (into.size >= MAX_KEYWORDS) return;
    if (token === '') continue;
    const t = term(token);
    if (t !== null) into.add(t);
  }
}

/** "Ann <ann.lee@example.org>" also as "ann.lee" and "example.org". */
function withAddressParts(value: string): string {
  const parts = [value];
  for (const m of value.matchAll(/([^\s<>"',;]+)@([^\s<>"',;]+)/g)) parts.push(m[1], m[2]);
  return parts.join(' ');
}

export interface KeywordSource {
  subject: string;
  from: string;
  to?: string;
  body: string;
}

export function documentKeywords(doc: KeywordSource): string[] {
  const out = new Set<string>();
  addTerms(doc.subject, out);
  addTerms(withAddressParts(doc.from), out);
  addTerms(withAddressParts(doc.to ?? ''), out);
  addTerms(doc.body, out);
  return [...out];
}

/** A query the remote index cannot answer (it finds whole words only). */
export class RemoteQueryError extends Error {
  override name = 'RemoteQueryError';
}

export interface RemoteQuery {
  /** Every one must be in a message. */
  required: string[];
  /** None may be. */
  excluded: string[];
}

const FIELD = /^(subject|from|to|body):/;

/**
 * Plain words are required (AND), `-word` excluded; `field:word` is the word
 * in any field (the remote index has no fields); a boost (`^2`) is ignored.
 * Wildcards and fuzzy terms are refused with a message saying so.
 */
export function parseRemoteQuery(text: string): RemoteQuery {
  const q: RemoteQuery = { required: [], excluded: [] };
  for (let word of text.trim().split(/\s+/)) {
    if (word === '') continue;
    let into = q.required;
    if (word.startsWith('-')) {
      into = q.excluded;
      word = word.slice(1);
    } else if (word.startsWith('+')) word = word.slice(1);
    word = word
      .toLowerCase()
      .replace(FIELD, '')
      .replace(/\^\d+$/, '');
    if (/[*~]/.test(word))
      throw new RemoteQueryError('Search of all mail finds whole words only: remove * and ~ from the query.');
    const terms = new Set<string>();
    addTerms(word, terms);
    into.push(...[...terms].filter((t) => !into.includes(t)));
  }
  if (q.required.length === 0 && q.excluded.length > 0)
    throw new RemoteQueryError('Add a word to find: a search of all mail cannot list everything but some words.');
  return q;
}
