// Everything that touches lunr 2.3.9: the index schema (fields, boosts,
// pipelines), turning a message into index terms with lunr's tokenizer and
// pipeline, and parsing queries with lunr's QueryParser into the compiled
// form compact-shard.ts evaluates. Shards are built by shard-builder.ts.
import lunr from 'lunr';
import type { DocMeta } from './doc-table.js';

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

/** lunr.tokenizer's separator: tokens are the lower-cased runs between these. */
const SEPARATOR = /[\s-]+/;

/** The index pipeline after lunr.trimmer, which indexTerms applies itself. */
const AFTER_TRIMMER = new lunr.Pipeline();
AFTER_TRIMMER.add(dropLongTokens, lunr.stopWordFilter, lunr.stemmer);

/** lunr.trimmer's rule (leading and trailing \W go), skipping its two regular expressions for a clean word. */
const isWordChar = (c: number) => (c >= 97 && c <= 122) || (c >= 48 && c <= 57) || (c >= 65 && c <= 90) || c === 95;
function trim(token: string): string {
  if (isWordChar(token.charCodeAt(0)) && isWordChar(token.charCodeAt(token.length - 1))) return token;
  return token.replace(/^\W+/, '').replace(/\W+$/, '');
}

/**
 * What the index pipeline makes of one lower-cased token: its index terms
 * (none for a stop word). Memoized by the trimmed word ("launch," and
 * "(launch" are one entry): mail reuses a small vocabulary, and the pipeline
 * (a dozen regular expressions of the Porter stemmer, a Token object per
 * step) was most of the cost of indexing a message. Bounded: two generations
 * of TERM_CACHE_SIZE / 2 words; when the newer is full the older is dropped,
 * so the words in use survive (clearing everything made each message after
 * it stem its words again).
 */
const TERM_CACHE_SIZE = 200_000;
/** A memoized word: its index terms, and its count in the field being counted (countFieldTerms). */
interface WordEntry {
  terms: string[];
  /** The countFieldTerms call that last counted it. */
  stamp: number;
  tf: number;
}
let recentWords = new Map<string, WordEntry>();
let olderWords = new Map<string, WordEntry>();

function wordEntry(token: string): WordEntry {
  const word = trim(token);
  let entry = recentWords.get(word);
  if (entry === undefined) {
    entry = olderWords.get(word) ?? {
      terms: AFTER_TRIMMER.run([new lunr.Token(word, {})]).map((t) => t.toString()),
      stamp: 0,
      tf: 0,
    };
    if (recentWords.size >= TERM_CACHE_SIZE / 2) {
      olderWords = recentWords;
      recentWords = new Map();
    }
    recentWords.set(word, entry);
  }
  return entry;
}

export function indexTerms(token: string): string[] {
  return wordEntry(token).terms;
}

/** The index terms of one field of a message, in order, as lunr.Builder#add derives them. */
export function fieldTerms(doc: IndexableDoc, field: Field): string[] {
  const out: string[] = [];
  for (const token of fieldTokens(doc, field)) {
    if (token) for (const term of indexTerms(token)) out.push(term);
  }
  return out;
}

function fieldTokens(doc: IndexableDoc, field: Field): string[] {
  const value = doc[field] ?? '';
  const text = field === 'from' || field === 'to' ? withAddressParts(value) : value;
  return text.toLowerCase().split(SEPARATOR);
}

let countStamp = 0;
/**
 * fieldTerms counted: adds each term's frequency in the field to `counts`
 * (in order of first occurrence) and returns the field's length in terms.
 * Counts each distinct word on its memo entry, then each distinct term in
 * the map: one map update per word rather than per token (an add's hot loop).
 */
export function countFieldTerms(doc: IndexableDoc, field: Field, counts: Map<string, number>): number {
  const stamp = ++countStamp;
  const words: WordEntry[] = [];
  for (const token of fieldTokens(doc, field)) {
    if (!token) continue;
    const e = wordEntry(token);
    if (e.stamp !== stamp) {
      e.stamp = stamp;
      e.tf = 0;
      words.push(e);
    }
    e.tf++;
  }
  let length = 0;
  for (const e of words) {
    for (const term of e.terms) {
      counts.set(term, (counts.get(term) ?? 0) + e.tf);
      length += e.tf;
    }
  }
  return length;
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
