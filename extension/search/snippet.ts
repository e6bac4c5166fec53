// Snippets and highlight ranges. Matching is done on the same tokens the index
// saw (lunr's tokenizer + the index pipeline), so "launches" is highlighted
// for a hit on the term "launch". Ranges are offsets into plain text: the
// page renders them as <mark> elements around text nodes, never as HTML.
import { indexTerm } from './lunr-shard.js';

/** Half-open [start, end) character range. */
export interface Range {
  start: number;
  end: number;
}

/** How far into a body we look for a match (bounds the cost for huge mails). */
const SCAN_CHARS = 50_000;
const SNIPPET_CHARS = 220;
const LEAD_CHARS = 60;

/** The candidate tokens' expression, made once per set of terms (a query highlights all its hits with one). */
const candidateExpressions = new WeakMap<ReadonlySet<string>, RegExp>();
function candidatesOf(terms: ReadonlySet<string>): RegExp {
  let re = candidateExpressions.get(terms);
  if (!re) {
    const initials = [...new Set([...terms].map((t) => t[0]))].map((c) => c.replace(/[\\\]^-]/g, '\\$&')).join('');
    re = new RegExp(`(?<![^\\s-])[^\\w\\s-]*[${initials}][^\\s-]*`, 'gi');
    candidateExpressions.set(terms, re);
  }
  return re;
}

/**
 * Yields the ranges of tokens (split like lunr.tokenizer) whose index term is
 * in `terms`. A regular expression finds the tokens whose first word
 * character (what lunr's trimmer leaves first) starts some term; only those go
 * through the (memoized) pipeline. The stemmer rewrites suffixes only, so
 * this skips most tokens without missing a match.
 */
function* matches(text: string, terms: ReadonlySet<string>): Generator<Range> {
  const candidates = candidatesOf(terms);
  const scan = text.length > SCAN_CHARS ? text.slice(0, SCAN_CHARS) : text;
  for (const m of scan.matchAll(candidates)) {
    const term = indexTerm(m[0].toLowerCase());
    if (term !== undefined && terms.has(term)) yield { start: m.index, end: m.index + m[0].length };
  }
}

/** Ranges of the words of `text` that matched one of the index `terms`. */
export function matchRanges(text: string, terms: ReadonlySet<string>): Range[] {
  return terms.size ? [...matches(text, terms)] : [];
}

/**
 * A window of the body around its first match (or its start), with the
 * matches inside it. Whitespace runs are kept (the page collapses them).
 */
export function makeSnippet(body: string, terms: ReadonlySet<string>): { text: string; ranges: Range[] } {
  const found = terms.size ? matches(body, terms) : undefined;
  const first = found?.next().value ?? undefined;
  let start = first ? Math.max(0, first.start - LEAD_CHARS) : 0;
  if (first && start > 0) {
    const space = body.indexOf(' ', start);
    if (space !== -1 && space < first.start) start = space + 1;
  }
  let end = Math.min(body.length, start + SNIPPET_CHARS);
  if (end < body.length) {
    const space = body.lastIndexOf(' ', end);
    if (space > start + SNIPPET_CHARS / 2) end = space;
  }
  const inWindow: Range[] = first ? [first] : [];
  if (found && first) {
    for (const r of found) {
      if (r.end > end) break;
      inWindow.push(r);
    }
  }
  const prefix = start > 0 ? '…' : '';
  const suffix = end < body.length ? '…' : '';
  const shift = prefix.length - start;
  const ranges = inWindow.filter((r) => r.end <= end).map((r) => ({ start: r.start + shift, end: r.end + shift }));
  return { text: prefix + body.slice(start, end) + suffix, ranges };
}

/** Splits text into plain and highlighted pieces (for rendering as text nodes and <mark>). */
export function segments(text: string, ranges: readonly Range[]): { text: string; mark: boolean }[] {
  const out: { text: string; mark: boolean }[] = [];
  let at = 0;
  for (const r of [...ranges].sort((a, b) => a.start - b.start)) {
    const start = Math.max(r.start, at);
    const end = Math.min(r.end, text.length);
    if (end <= start) continue;
    if (start > at) out.push({ text: text.slice(at, start), mark: false });
    out.push({ text: text.slice(start, end), mark: true });
    at = end;
  }
  if (at < text.length) out.push({ text: text.slice(at), mark: false });
  return out;
}
