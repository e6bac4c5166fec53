// Everything that touches lunr 2.3.9: the index schema (fields, boosts,
// pipelines), turning a message into index terms with lunr's tokenizer and
// pipeline, and parsing queries with lunr's QueryParser into the compiled
// form compact-shard.ts evaluates. Shards are built by shard-builder.ts.
import lunr from 'lunr';
import type { DocMeta } from './doc-table.js';
import { hashRange, WordTable } from './word-table.js';

export const FIELDS = ['subject', 'from', 'to', 'body'] as const;
export type Field = (typeof FIELDS)[number];
export const FIELD_BOOST: Record<Field, number> = { subject: 2, from: 1, to: 1, body: 1 };

/** Longer tokens are base64 blobs, PGP armor, hashes: noise that bloats the vocabulary. */
const MAX_TOKEN_LENGTH = 40;

/** One message as a shard takes it: the text it indexes and what a result line shows (DocMeta). */
export interface IndexableDoc extends DocMeta {
  seq: number;
  /** Milliseconds since the epoch. */
  date: number;
  body: string;
}

// ---- lunr internals used here (absent from @types/lunr) --------------------

export const PRESENCE = { OPTIONAL: 1, REQUIRED: 2, PROHIBITED: 3 } as const;
export interface Clause extends lunr.Query.Clause {
  presence: number;
}
/** A node of a lunr.TokenSet (an automaton over characters, '*' matching any). */
export interface TokenSetNode {
  final: boolean;
  edges: Record<string, TokenSetNode>;
}
interface LunrStatics {
  QueryParser: new (str: string, query: lunr.Query) => { parse(): void };
  TokenSet: { fromClause(clause: Clause): TokenSetNode };
}
const L = lunr as unknown as LunrStatics;
const utf8 = new TextEncoder();

// ---- pipelines ----------------------------------------------------------------

const dropLongTokens: lunr.PipelineFunction = (token) =>
  token.toString().length > MAX_TOKEN_LENGTH ? (undefined as unknown as lunr.Token) : token;
lunr.Pipeline.registerFunction(dropLongTokens, 'pmfDropLongTokens');

/** Pipeline applied to indexed text (and to text we highlight). */
export function indexPipeline(): lunr.Pipeline {
  const p = new lunr.Pipeline();
  p.add(lunr.trimmer, dropLongTokens, lunr.stopWordFilter, lunr.stemmer);
  return p;
}

/** Pipeline applied to query terms (trimmed like indexed tokens, then stemmed). */
function searchPipeline(): lunr.Pipeline {
  const p = new lunr.Pipeline();
  p.add(lunr.trimmer, lunr.stemmer);
  return p;
}
export const SEARCH_PIPELINE = searchPipeline();

/** Query words the index pipeline drops entirely (stop words): they can never match. */
const NEVER_INDEXED = new lunr.Pipeline();
NEVER_INDEXED.add(lunr.trimmer, lunr.stopWordFilter);
const neverIndexed = (term: string) => NEVER_INDEXED.runString(term).every((t) => t === '');

/** "Ann <ann.lee@example.org>" also yields "ann.lee" and "example.org", so either finds the mail. */
export function withAddressParts(value: string): string {
  const parts = [value];
  for (const m of value.matchAll(/([^\s<>"',;]+)@([^\s<>"',;]+)/g)) parts.push(m[1], m[2]);
  return parts.join(' ');
}

// ---- indexing ------------------------------------------------------------------

/** The index pipeline after lunr.trimmer, which the tokenizer below applies itself. */
const AFTER_TRIMMER = new lunr.Pipeline();
AFTER_TRIMMER.add(dropLongTokens, lunr.stopWordFilter, lunr.stemmer);

/**
 * lunr.tokenizer's separator, /[\s-]/ for one UTF-16 code unit: '-', and
 * JavaScript's \s (line terminators, Unicode Zs, tab, VT, FF, BOM).
 */
export function isSeparator(c: number): boolean {
  if (c < 128) return c === 32 || c === 45 || (c >= 9 && c <= 13);
  return (
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** \w: what lunr.trimmer keeps (it drops the leading and trailing \W of a token). */
export const isWordChar = (c: number): boolean =>
  (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || c === 95;

/**
 * A word (a token trimmed as lunr.trimmer does: "launch," and "(launch" are
 * one) and its index term, undefined for a stop word or a dropped token.
 * `stamp`/`tf` count it inside one field (fieldWords); `builder`/`local` are
 * the term's id in the last shard builder that saw it (shard-builder.ts).
 */
export interface WordEntry {
  readonly word: string;
  readonly term: string | undefined;
  stamp: number;
  tf: number;
  builder: number;
  local: number;
}

/**
 * Memo of the index pipeline per word: mail reuses a small vocabulary, and
 * the pipeline (a dozen regular expressions of the Porter stemmer, a Token
 * object per step) was most of the cost of indexing a message. Bounded: two
 * generations of WORD_MEMO_SIZE / 2 words; when the newer is full the older
 * is dropped, so the words in use survive.
 */
const WORD_MEMO_SIZE = 200_000;
let recentWords = new WordTable<WordEntry>(WORD_MEMO_SIZE / 2);
let olderWords = new WordTable<WordEntry>(WORD_MEMO_SIZE / 2);

/** The entry of the word text[start, end) (already trimmed). */
function wordAt(text: string, start: number, end: number): WordEntry {
  const hash = hashRange(text, start, end);
  const found = recentWords.get(text, start, end, hash);
  if (found) return found;
  let entry = olderWords.get(text, start, end, hash);
  if (!entry) {
    const word = text.slice(start, end);
    const terms = AFTER_TRIMMER.run([new lunr.Token(word, {})]);
    // Each function of the pipeline keeps or drops its one token.
    entry = { word, term: terms[0]?.toString(), stamp: 0, tf: 0, builder: 0, local: 0 };
  }
  if (recentWords.full) {
    olderWords = recentWords;
    recentWords = new WordTable(WORD_MEMO_SIZE / 2);
  }
  // Declined when its slots are crowded (crafted mail): then it is used unmemoized; a message's
  // counts still add up per term (ShardBuilder.add).
  recentWords.add(entry, hash);
  return entry;
}

/** The index term of one lower-cased token (lunr's index pipeline), undefined if it has none. */
export function indexTerm(token: string): string | undefined {
  let a = 0;
  while (a < token.length && !isWordChar(token.charCodeAt(a))) a++;
  let b = token.length;
  while (b > a && !isWordChar(token.charCodeAt(b - 1))) b--;
  return wordAt(token, a, b).term;
}

/** One field's index terms as words counted: each distinct word with a term, and its count. */
export interface FieldWords {
  words: WordEntry[];
  tfs: number[];
  /** The field's length in terms (lunr's field length). */
  length: number;
}

let countStamp = 0;

/**
 * The words of one field of a message, tokenized as lunr.tokenizer does
 * (lower-cased, split on separators) and trimmed as lunr.trimmer does, in
 * one pass over the text: a token is looked up in the memo by its position
 * in the text, without cutting it out.
 */
export function fieldWords(doc: IndexableDoc, field: Field): FieldWords {
  const value = doc[field] ?? '';
  const text = (field === 'from' || field === 'to' ? withAddressParts(value) : value).toLowerCase();
  const stamp = ++countStamp;
  const words: WordEntry[] = [];
  const n = text.length;
  let i = 0;
  for (;;) {
    while (i < n && isSeparator(text.charCodeAt(i))) i++;
    if (i >= n) break;
    const start = i;
    let first = -1;
    let last = -1;
    for (; i < n; i++) {
      const c = text.charCodeAt(i);
      if (isSeparator(c)) break;
      if (isWordChar(c)) {
        if (first < 0) first = i;
        last = i + 1;
      }
    }
    // A token without word characters trims to "" (which lunr indexes as it does any term).
    const e = first < 0 ? wordAt(text, start, start) : wordAt(text, first, last);
    if (e.term === undefined) continue;
    if (e.stamp !== stamp) {
      e.stamp = stamp;
      e.tf = 0;
      words.push(e);
    }
    e.tf++;
  }
  let length = 0;
  const tfs = words.map((e) => {
    length += e.tf;
    return e.tf;
  });
  return { words, tfs, length };
}

// ---- token-set automata --------------------------------------------------------

/** The word spelled by a token set that is a single exact word, else undefined. */
function exactWord(node: TokenSetNode): string | undefined {
  let word = '';
  for (;;) {
    const keys = Object.keys(node.edges);
    if (keys.length === 0) return node.final ? word : undefined;
    if (node.final || keys.length !== 1 || keys[0] === '*') return undefined;
    word += keys[0];
    node = node.edges[keys[0]];
  }
}

/** The characters every word the token set accepts starts with ("" for a leading wildcard or fuzzy term). */
export function literalPrefix(node: TokenSetNode): string {
  let prefix = '';
  for (;;) {
    const keys = Object.keys(node.edges);
    if (node.final || keys.length !== 1 || keys[0] === '*') return prefix;
    prefix += keys[0];
    node = node.edges[keys[0]];
  }
}

/** Whether the (possibly wildcard/fuzzy) token set accepts `term`. */
export function accepts(start: TokenSetNode, term: string): boolean {
  let states = new Set([start]);
  for (const ch of term) {
    const next = new Set<TokenSetNode>();
    for (const s of states) {
      if (s.edges[ch]) next.add(s.edges[ch]);
      if (s.edges['*']) next.add(s.edges['*']);
    }
    if (next.size === 0) return false;
    states = next;
  }
  for (const s of states) if (s.final) return true;
  return false;
}

// ---- queries ----------------------------------------------------------------------

/**
 * Parses a user's query with lunr's syntax (field:term, +must, -mustnot, wild*,
 * fuzzy~1, boost^2). Unlike lunr, plain terms are required (AND), as in mail
 * search boxes. Stop words and bare punctuation are dropped (required, they
 * would match nothing). Text lunr cannot parse ("re: budget") is searched as plain words.
 */
export function parseQuery(text: string): Clause[] {
  let query = new lunr.Query([...FIELDS]);
  try {
    new L.QueryParser(text, query).parse();
  } catch (err) {
    if (!(err instanceof Error && err.name === 'QueryParseError')) throw err;
    query = new lunr.Query([...FIELDS]);
    for (const word of text.toLowerCase().split(/[\s\-:^~*+]+/)) if (word) query.term(word, {});
  }
  const clauses: Clause[] = [];
  for (const c of query.clauses as Clause[]) {
    if (c.usePipeline && neverIndexed(c.term)) continue;
    clauses.push({ ...c, presence: c.presence === PRESENCE.OPTIONAL ? PRESENCE.REQUIRED : c.presence });
  }
  return clauses;
}

/** A parsed query ready to run on any shard: per clause, field indices and term patterns. */
export interface CompiledQuery {
  clauses: {
    presence: number;
    boost: number;
    fields: number[];
    /**
     * Exact index terms, or automata for wildcard/fuzzy terms; `key` is the
     * UTF-8 of the exact term, or of the prefix all the automaton's words
     * share, encoded once per query rather than once per shard.
     */
    patterns: { exact?: string; set?: TokenSetNode; key: Uint8Array }[];
  }[];
}

export function compileQuery(clauses: Clause[]): CompiledQuery {
  return {
    clauses: clauses.map((c) => ({
      presence: c.presence,
      boost: c.boost,
      fields: c.fields.map((f) => FIELDS.indexOf(f as Field)),
      patterns: (c.usePipeline ? SEARCH_PIPELINE.runString(c.term) : [c.term]).map((term) => {
        const set = L.TokenSet.fromClause({ ...c, term });
        const exact = exactWord(set);
        if (exact !== undefined) return { exact, key: utf8.encode(exact) };
        return { set, key: utf8.encode(literalPrefix(set)) };
      }),
    })),
  };
}
