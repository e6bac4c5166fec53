// Snippets and highlight ranges. Matching is done on the same tokens the index
// saw (lunr's tokenizer + the index pipeline), so "launches" is highlighted
// for a hit on the term "launch". Ranges are offsets into plain text: the
// page renders them as <mark> elements around text nodes, never as HTML.
import lunr from 'lunr';
import { indexPipeline } from './lunr-shard.js';

/** Half-open [start, end) character range. */
export interface Range {
  start: number;
  end: number;
}

/** How far into a body we look for a match (bounds the cost for huge mails). */
const SCAN_CHARS = 50_000;
const SNIPPET_CHARS = 220;
const LEAD_CHARS = 60;

const pipeline = indexPipeline();

/** Ranges of the tokens of `text` whose index term is one of `terms`. */
export function matchRanges(text: string, terms: ReadonlySet<string>): Range[] {
  if (terms.size === 0 || text.length === 0) return [];
  const ranges: Range[] = [];
  for (const raw of lunr.tokenizer(text.slice(0, SCAN_CHARS))) {
    const [start, length] = (raw as unknown as { metadata: { position: [number, number] } }).metadata.position;
    for (const t of pipeline.run([raw])) {
      if (terms.has(t.toString())) {
        ranges.push({ start, end: Math.min(text.length, start + length) });
        break;
      }
    }
  }
  return ranges;
}

/**
 * A window of the body around its first match (or its start), with the
 * matches inside it. Whitespace runs are kept (the page collapses them).
 */
export function makeSnippet(body: string, terms: ReadonlySet<string>): { text: string; ranges: Range[] } {
  const all = matchRanges(body, terms);
  let start = all.length ? Math.max(0, all[0].start - LEAD_CHARS) : 0;
  if (start > 0) {
    const space = body.indexOf(' ', start);
    if (space !== -1 && space < all[0].start) start = space + 1;
  }
  let end = Math.min(body.length, start + SNIPPET_CHARS);
  if (end < body.length) {
    const space = body.lastIndexOf(' ', end);
    if (space > start + SNIPPET_CHARS / 2) end = space;
  }
  const prefix = start > 0 ? '…' : '';
  const suffix = end < body.length ? '…' : '';
  const shift = prefix.length - start;
  const ranges = all
    .filter((r) => r.start >= start && r.end <= end)
    .map((r) => ({ start: r.start + shift, end: r.end + shift }));
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
