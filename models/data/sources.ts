// Command-line data sources -> labelled examples.
import type { PUBLIC_CORPORA } from '../plain/model.js';
import { mailStoreMail, providerStoreMail, storeExamples, type MailStoreSummary } from './mailstore.js';
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
  /** Dovecot mail stores (mailstore.ts), labelled by folder and keywords, split by time. */
  mailstore?: string[];
  /** provider-server SQLite stores, labelled by webmail folder, split by time. */
  'pmf-store'?: string[];
}

/** By name, as models/plain PUBLIC_CORPORA lists them (a model trained on these alone is a demo). */
export const CORPORA: Record<(typeof PUBLIC_CORPORA)[number], () => Example[]> = {
  spamassassin: () => loadSpamAssassin(),
  '20news': () => loadTwentyNews(),
  reuters: () => loadReuters(),
};

/** Mail stores as examples: deduplicated across all of them, the newest testFraction held out. */
function storeSources(s: Sources, testFraction: number): Example[] {
  if (!s.mailstore?.length && !s['pmf-store']?.length) return [];
  const summary: MailStoreSummary = { read: 0, encrypted: 0, duplicates: 0, skippedFolders: [] };
  const skipped = new Set<string>();
  function* all() {
    for (const d of s.mailstore ?? []) yield* mailStoreMail(d, skipped);
    for (const f of s['pmf-store'] ?? []) yield* providerStoreMail(f);
  }
  const out = storeExamples(all(), testFraction, summary);
  console.log(
    `mail store: ${summary.read} messages read, ${summary.encrypted} encrypted (skipped), ${summary.duplicates} duplicates` +
      ` merged, ${out.length} kept; folders left out: ${[...skipped].join(', ') || 'none'}`,
  );
  return out;
}

export function loadSources(s: Sources, testFraction = 0.2): Example[] {
  const parts: Example[][] = [storeSources(s, testFraction)];
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
  if (out.length === 0)
    throw new Error(
      'no data: give --corpus, --jsonl, --mbox LABEL=FILE, --maildir DIR, --mailstore DIR or --pmf-store FILE',
    );
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
