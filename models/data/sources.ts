// Command-line data sources -> labelled examples.
import {
  loadJsonl,
  loadMaildir,
  loadMbox,
  loadReuters,
  loadSpamAssassin,
  loadTwentyNews,
  type Example,
} from './loaders.js';

export interface Sources {
  corpus?: string[];
  jsonl?: string[];
  mbox?: string[];
  maildir?: string[];
}

export const CORPORA: Record<string, () => Example[]> = {
  spamassassin: () => loadSpamAssassin(),
  '20news': () => loadTwentyNews(),
  reuters: () => loadReuters(),
};

export function loadSources(s: Sources): Example[] {
  const parts: Example[][] = [];
  for (const c of s.corpus ?? []) {
    const load = CORPORA[c];
    if (!load) throw new Error(`unknown corpus ${c} (one of ${Object.keys(CORPORA).join(', ')})`);
    parts.push(load());
  }
  for (const f of s.jsonl ?? []) parts.push(loadJsonl(f));
  for (const m of s.mbox ?? []) {
    const eq = m.indexOf('=');
    if (eq <= 0) throw new Error(`--mbox expects LABEL=FILE, got ${m}`);
    parts.push(loadMbox(m.slice(eq + 1), m.slice(0, eq)));
  }
  for (const d of s.maildir ?? []) parts.push(loadMaildir(d));
  // flat(), not push(...part): a mail store holds more messages than a call takes arguments.
  const out = parts.flat();
  if (out.length === 0) throw new Error('no data: give --corpus, --jsonl, --mbox LABEL=FILE or --maildir DIR');
  return out;
}

/**
 * Label order of a model. Spam models have [negative, positive] with the
 * positive class "spam" if present, else the last label in sort order.
 */
export function labelOrder(task: 'spam' | 'topics', labels: Iterable<string>): string[] {
  const sorted = [...new Set(labels)].sort();
  if (task === 'topics') return sorted;
  if (sorted.length !== 2) throw new Error(`spam models need exactly two labels, data has ${sorted.join(', ')}`);
  return sorted.includes('spam') ? [sorted.find((l) => l !== 'spam')!, 'spam'] : sorted;
}
