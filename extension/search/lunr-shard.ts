// Everything that touches lunr 2.3.9: the index schema (fields, pipelines),
// building a shard incrementally, (de)serializing it with lunr's toJSON, and
// running one query on one shard with scores made comparable across shards.
//
// Two deliberate departures from lunr's defaults, both for 40K-message scale:
// - No eager lunr.TokenSet. Building it costs ~1 s per 50K-term shard at
//   build *and* at load time, and it is only needed for wildcard/fuzzy terms.
//   `Vocabulary` stands in for it: exact terms are a hash lookup, patterns are
//   matched against the sorted term list on demand.
// - Posting metadata is empty (no positions are stored), and every empty
//   metadata object of a loaded shard is replaced by one shared object, which
//   cuts the heap of a loaded shard by about a third.
import lunr from 'lunr';

export const FIELDS = ['subject', 'from', 'to', 'body'] as const;
export type Field = (typeof FIELDS)[number];
const FIELD_BOOST: Record<Field, number> = { subject: 2, from: 1, to: 1, body: 1 };

/** Longer tokens are base64 blobs, PGP armor, hashes: noise that bloats the vocabulary. */
const MAX_TOKEN_LENGTH = 40;

/** The plain text a shard indexes for one message. */
export interface IndexableDoc {
  ref: string;
  subject: string;
  from: string;
  to: string;
  body: string;
}

// ---- lunr internals used here (absent from @types/lunr) --------------------

interface Posting {
  _index: number;
  [field: string]: number | Record<string, object>;
}
type InvertedIndex = Record<string, Posting>;
interface VectorInternal {
  elements: number[];
}
interface IndexInternal {
  invertedIndex: InvertedIndex;
  fieldVectors: Record<string, lunr.Vector>;
}
const internals = (index: lunr.Index) => index as unknown as IndexInternal;
interface TokenSetNode {
  final: boolean;
  edges: Record<string, TokenSetNode>;
}
interface BuilderInternal {
  invertedIndex: InvertedIndex;
  fieldVectors: Record<string, lunr.Vector>;
  documentCount: number;
  calculateAverageFieldLengths(): void;
  createFieldVectors(): void;
}
export const PRESENCE = { OPTIONAL: 1, REQUIRED: 2, PROHIBITED: 3 } as const;
export interface Clause extends lunr.Query.Clause {
  presence: number;
}
interface LunrStatics {
  idf(posting: Posting, documentCount: number): number;
  QueryParser: new (str: string, query: lunr.Query) => { parse(): void };
  TokenSet: { fromClause(clause: Clause): TokenSetNode };
}
const L = lunr as unknown as LunrStatics;

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
const neverIndexed = (term: string) => NEVER_INDEXED.runString(term).length === 0;

/** "Ann <ann.lee@example.org>" also yields "ann.lee" and "example.org", so either finds the mail. */
function withAddressParts(value: string): string {
  const parts = [value];
  for (const m of value.matchAll(/([^\s<>"',;]+)@([^\s<>"',;]+)/g)) parts.push(m[1], m[2]);
  return parts.join(' ');
}

// ---- building -------------------------------------------------------------------

/** A shard being filled; `finish()` may be called repeatedly as documents arrive. */
export class ShardBuilder {
  private readonly builder = new lunr.Builder();
  private built?: lunr.Index;

  constructor() {
    const b = this.builder;
    b.pipeline = indexPipeline();
    b.searchPipeline = searchPipeline();
    b.ref('ref');
    for (const f of FIELDS) {
      const extractor =
        f === 'from' || f === 'to' ? (d: object) => withAddressParts((d as IndexableDoc)[f]) : undefined;
      b.field(f, { boost: FIELD_BOOST[f], extractor });
    }
  }

  add(doc: IndexableDoc): void {
    this.builder.add(doc);
    this.built = undefined;
  }

  get size(): number {
    return (this.builder as unknown as BuilderInternal).documentCount;
  }

  /** The queryable index over everything added so far (vectors recomputed only when stale). */
  finish(): lunr.Index {
    if (!this.built) {
      const b = this.builder as unknown as BuilderInternal;
      b.calculateAverageFieldLengths();
      b.createFieldVectors();
      this.built = makeIndex(b.invertedIndex, b.fieldVectors, searchPipeline());
    }
    return this.built;
  }
}

function makeIndex(invertedIndex: InvertedIndex, fieldVectors: Record<string, lunr.Vector>, pipeline: lunr.Pipeline) {
  return new lunr.Index({
    invertedIndex,
    fieldVectors,
    tokenSet: new Vocabulary(invertedIndex),
    fields: [...FIELDS],
    pipeline,
  } as unknown as lunr.Index.Attributes);
}

// ---- serialization ------------------------------------------------------------------

export type SerializedIndex = ReturnType<lunr.Index['toJSON']>;

interface IndexJson {
  version: string;
  fields: string[];
  fieldVectors: [string, number[]][];
  invertedIndex: [string, Posting][];
  pipeline: string[];
}

const NO_METADATA = Object.freeze({});

/** lunr.Index.load without the eager TokenSet, sharing empty posting metadata. */
export function loadIndex(json: unknown): lunr.Index {
  const j = json as IndexJson;
  if (!j || !Array.isArray(j.fieldVectors) || !Array.isArray(j.invertedIndex) || !Array.isArray(j.pipeline)) {
    throw new Error('not a serialized lunr index');
  }
  if (j.fields.join() !== FIELDS.join()) throw new Error('index fields differ from this version');
  const fieldVectors: Record<string, lunr.Vector> = Object.create(null);
  for (const [ref, elements] of j.fieldVectors) fieldVectors[ref] = new lunr.Vector(elements);
  const invertedIndex: InvertedIndex = Object.create(null);
  for (const [term, posting] of j.invertedIndex) {
    for (const field of FIELDS) {
      const refs = posting[field] as Record<string, object>;
      for (const ref in refs) refs[ref] = NO_METADATA;
    }
    invertedIndex[term] = posting;
  }
  return makeIndex(invertedIndex, fieldVectors, lunr.Pipeline.load(j.pipeline));
}

// ---- vocabulary (stand-in for lunr.TokenSet) -------------------------------------

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

/** Whether the (possibly wildcard/fuzzy) token set accepts `term`. */
function accepts(start: TokenSetNode, term: string): boolean {
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

class Vocabulary {
  private sorted?: string[];
  constructor(private readonly invertedIndex: InvertedIndex) {}

  /** Called by lunr.Index#query with the token set of one query term. */
  intersect(pattern: TokenSetNode): { toArray(): string[] } {
    const word = exactWord(pattern);
    let terms: string[];
    if (word !== undefined) terms = word in this.invertedIndex ? [word] : [];
    else {
      this.sorted ??= Object.keys(this.invertedIndex).sort();
      terms = this.sorted.filter((t) => accepts(pattern, t));
    }
    return { toArray: () => terms };
  }
}

// ---- queries ----------------------------------------------------------------------

/**
 * Parses a user's query with lunr's syntax (field:term, +must, -mustnot, wild*,
 * fuzzy~1, boost^2). Unlike lunr, plain terms are required (AND), as in mail
 * search boxes. Stop words are dropped (lunr would crash on a required stop
 * word). Text lunr cannot parse ("re: budget") is searched as plain words.
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

/** Per index term: how each query clause weights it, per field (lunr's query-vector weights). */
type TermMatcher = (term: string) => Map<string, number> | undefined;

/** Builds the term→(field→boost) function of a parsed query, cached per term. */
export function termWeights(clauses: Clause[]): TermMatcher {
  const rules: { test: (t: string) => boolean; fields: string[]; boost: number }[] = [];
  for (const c of clauses) {
    if (c.presence === PRESENCE.PROHIBITED) continue;
    const terms = c.usePipeline ? SEARCH_PIPELINE.runString(c.term) : [c.term];
    for (const term of terms) {
      const set = L.TokenSet.fromClause({ ...c, term });
      const word = exactWord(set);
      rules.push({
        test: word !== undefined ? (t) => t === word : (t) => accepts(set, t),
        fields: c.fields,
        boost: c.boost,
      });
    }
  }
  const cache = new Map<string, Map<string, number> | undefined>();
  return (term) => {
    if (cache.has(term)) return cache.get(term);
    let weights: Map<string, number> | undefined;
    for (const r of rules) {
      if (!r.test(term)) continue;
      weights ??= new Map();
      for (const f of r.fields) weights.set(f, (weights.get(f) ?? 0) + r.boost);
    }
    cache.set(term, weights);
    return weights;
  };
}

/** One document matched in one shard: index term → field → (empty) metadata. */
export interface ShardMatch {
  ref: string;
  terms: Record<string, Record<string, unknown>>;
}

/** Terms every match must contain (exact, required clauses), after the search pipeline. */
export function requiredTerms(clauses: Clause[]): string[] {
  return clauses
    .filter((c) => c.presence === PRESENCE.REQUIRED && c.usePipeline && !c.editDistance && !c.term.includes('*'))
    .flatMap((c) => SEARCH_PIPELINE.runString(c.term));
}

/**
 * Runs the clauses on one shard; lunr decides which documents match. A shard
 * lacking one of the `required` terms cannot match and is skipped outright
 * (lunr would still walk the postings of every other term).
 */
export function matchShard(index: lunr.Index, clauses: Clause[], required: string[]): ShardMatch[] {
  const inv = internals(index).invertedIndex;
  if (required.some((t) => !(t in inv))) return [];
  return index
    .query((q) => {
      for (const c of clauses) q.clause({ ...c, fields: [...c.fields] });
    })
    .map((r) => ({ ref: r.ref, terms: r.matchData.metadata as ShardMatch['terms'] }));
}

/** Document frequency of a term in a shard, counted like lunr.idf (once per field). */
export function documentFrequency(index: lunr.Index, term: string): number {
  const posting = internals(index).invertedIndex[term];
  if (!posting) return 0;
  let df = 0;
  for (const f of FIELDS) df += Object.keys(posting[f] as object).length;
  return df;
}

/** lunr's BM25 idf from a document frequency and a document count. */
export function idf(df: number, documentCount: number): number {
  return Math.log(1 + Math.abs((documentCount - df + 0.5) / (df + 0.5)));
}

function vectorValue(v: lunr.Vector | undefined, termIndex: number): number {
  if (!v) return 0;
  const e = (v as unknown as VectorInternal).elements;
  let lo = 0;
  let hi = e.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    const k = e[2 * mid];
    if (k === termIndex) return e[2 * mid + 1];
    if (k < termIndex) lo = mid + 1;
    else hi = mid - 1;
  }
  return 0;
}

/**
 * Cross-shard score of one match: BM25 with the *global* idf. lunr stores per
 * (field, doc, term) the weight idf_shard·tf_norm·fieldBoost; multiplying by
 * idfRatio(term) = idf_global / idf_shard makes scores from different shards
 * comparable. (lunr's division by the query-vector norm is dropped: it is per
 * shard in lunr, and a constant across documents once idf is global.)
 */
export function globalScore(
  index: lunr.Index,
  match: ShardMatch,
  weightsOf: TermMatcher,
  idfRatio: (term: string) => number,
): number {
  const { invertedIndex: inv, fieldVectors } = internals(index);
  let score = 0;
  for (const term in match.terms) {
    const weights = weightsOf(term);
    const posting = inv[term];
    if (!weights || !posting) continue;
    const ratio = idfRatio(term);
    for (const f in match.terms[term]) {
      const boost = weights.get(f);
      if (boost) score += boost * ratio * vectorValue(fieldVectors[`${f}/${match.ref}`], posting._index);
    }
  }
  return score;
}
