// Synthetic mail for the search tests, and the brute-force reference they are
// checked against. Words are "w0".."w(V-1)": lunr's trimmer, stop-word filter
// and stemmer leave them unchanged, so the reference can tokenize by splitting
// on spaces, independently of lunr. Every message has the same number of
// tokens per field, so BM25's length normalization is 1 everywhere and the
// reference score is a closed formula.
import type { MailDoc } from '../../search/mail-search.js';

export const VOCAB = 300;
export const BODY_WORDS = 16;
export const SUBJECT_WORDS = 3;

/** Deterministic PRNG (mulberry32) so failures reproduce. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Zipf-ish word choice: low indices are common, high ones rare; `shift` rotates which are which. */
function word(rand: () => number, shift: number): string {
  return `w${(Math.floor(VOCAB * rand() ** 2.2) + shift) % VOCAB}`;
}

const words = (rand: () => number, n: number, shift: number) =>
  Array.from({ length: n }, () => word(rand, shift)).join(' ');

/** `shift` > 0 makes word frequencies differ between documents (topic drift between shards). */
export function makeDoc(rand: () => number, id: string, date = 1_600_000_000_000, shift = 0): MailDoc {
  const user = `u${Math.floor(rand() * 50)}`;
  return {
    id,
    from: `${user} <${user}@mail.test>`,
    subject: words(rand, SUBJECT_WORDS, shift),
    date,
    body: words(rand, BODY_WORDS, shift),
    url: `https://mail.test/m/${encodeURIComponent(id)}`,
  };
}

/** n messages; with `drift`, every block of 500 uses a differently rotated vocabulary. */
export function makeDocs(seed: number, n: number, prefix = 'm', drift = false): MailDoc[] {
  const rand = rng(seed);
  return Array.from({ length: n }, (_, i) =>
    makeDoc(rand, `${prefix}${i}`, 1_600_000_000_000 + i * 60_000, drift ? Math.floor(i / 500) * 7 : 0),
  );
}

/** Reference model: live documents by id, queried by brute-force scan. */
export class Reference {
  readonly docs = new Map<string, MailDoc>();

  add(d: MailDoc): void {
    this.docs.delete(d.id);
    this.docs.set(d.id, d);
  }

  remove(id: string): void {
    this.docs.delete(id);
  }

  private static fields(d: MailDoc): Record<string, string[]> {
    const from = d.from.split(' ')[0];
    return { subject: d.subject.split(' '), from: [from], to: [], body: d.body.split(' ') };
  }

  /** Ids of live documents containing every term (any field), minus those containing a `not` term. */
  matching(terms: string[], not: string[] = [], field?: string): Set<string> {
    const out = new Set<string>();
    for (const d of this.docs.values()) {
      const f = Reference.fields(d);
      const has = (t: string) => (field ? f[field] : Object.values(f).flat()).includes(t);
      const hasAnywhere = (t: string) => Object.values(f).flat().includes(t);
      if (terms.every(has) && !not.some(hasAnywhere)) out.add(d.id);
    }
    return out;
  }

  /**
   * BM25 as lunr defines it (k1 = 1.2, b = 0.75, subject boost 2, idf counted
   * once per field), with global document frequencies, all field lengths equal.
   */
  scores(terms: string[]): Map<string, number> {
    const n = this.docs.size;
    const cache = new Map<string, number>();
    const idf = (t: string) => {
      if (cache.has(t)) return cache.get(t)!;
      let df = 0;
      for (const d of this.docs.values())
        for (const toks of Object.values(Reference.fields(d))) if (toks.includes(t)) df++;
      cache.set(t, Math.log(1 + Math.abs((n - df + 0.5) / (df + 0.5))));
      return cache.get(t)!;
    };
    const boost: Record<string, number> = { subject: 2, from: 1, to: 1, body: 1 };
    const out = new Map<string, number>();
    for (const id of this.matching(terms)) {
      const f = Reference.fields(this.docs.get(id)!);
      let s = 0;
      for (const t of new Set(terms)) {
        for (const [name, toks] of Object.entries(f)) {
          const tf = toks.filter((x) => x === t).length;
          if (tf) s += boost[name] * idf(t) * ((2.2 * tf) / (1.2 + tf));
        }
      }
      out.set(id, s);
    }
    return out;
  }
}

/** Random 1–3 word queries over the vocabulary (common and rare words). */
export function queries(seed: number, n: number): string[][] {
  const rand = rng(seed);
  return Array.from({ length: n }, () =>
    Array.from({ length: 1 + Math.floor(rand() * 3) }, () => `w${Math.floor(VOCAB * rand() ** 1.5)}`),
  );
}
