// Mitra's Search for a query's keywords at once (docs/remote-search.md#as-implemented):
// every address 1..counter(slot) of every keyword, padded with random
// addresses to the next power of two (√2 steps) and shuffled, so the
// provider sees neither where one keyword's addresses end nor exactly how
// many there are; then the answer turned into the messages that have every
// required keyword and no excluded one, newest first, the checks of the
// entries that put each shown message there verified.
import { ADDR_BYTES, type SearchAnswer } from '../../../protocol/remote-search.js';
import { addressAndMask, docPad, openSort, randomFill, RemoteIndexIntegrityError, type RemoteKeys } from './keys.js';
import type { RemoteQuery } from './keywords.js';
import type { Counters } from './state.js';
import type { KeywordKeys } from './update.js';

export interface SearchPlan {
  /** The request: every address, shuffled, with the padding. */
  addrs: Uint8Array;
  /** Per keyword of the query (required first), the request positions of its addresses (counter c at c - 1). */
  positions: Uint32Array[];
  /** Per request position, the mask of its address (to verify the check of an entry found there). */
  masks: Uint32Array;
  required: number;
}

/** The padded size of a request of n addresses: the next 2^(k/2), rounded up. */
export function paddedRequest(n: number): number {
  if (n <= 16) return 16;
  return Math.ceil(2 ** (Math.ceil(2 * Math.log2(n)) / 2));
}

/** A uniform random integer in [0, n) from the CSPRNG (n ≤ 2^32). */
function randomBelow(n: number, pool: { buf: Uint32Array; at: number }): number {
  const limit = Math.floor(2 ** 32 / n) * n;
  for (;;) {
    if (pool.at >= pool.buf.length) {
      crypto.getRandomValues(pool.buf);
      pool.at = 0;
    }
    const x = pool.buf[pool.at++];
    if (x < limit) return x % n;
  }
}

export function planSearch(kw: KeywordKeys, counters: Counters, q: RemoteQuery): SearchPlan {
  const words = [...q.required, ...q.excluded];
  const keys = words.map((w) => kw.get(w));
  for (const k of keys) if (!counters.knows(k.slot)) throw new Error('the counters of a query keyword are not loaded');
  const counts = keys.map((k) => counters.slots[k.slot]);
  const real = counts.reduce((a, b) => a + b, 0);
  const total = paddedRequest(real);
  // A random permutation of the request's positions (Fisher–Yates).
  const order = new Uint32Array(total);
  for (let i = 0; i < total; i++) order[i] = i;
  const pool = { buf: new Uint32Array(1024), at: 1024 };
  for (let i = total - 1; i > 0; i--) {
    const j = randomBelow(i + 1, pool);
    const t = order[i];
    order[i] = order[j];
    order[j] = t;
  }
  const addrs = randomFill(new Uint8Array(total * ADDR_BYTES));
  const positions: Uint32Array[] = [];
  const masks = new Uint32Array(total);
  let next = 0;
  keys.forEach((k, w) => {
    const pos = new Uint32Array(counts[w]);
    for (let c = 1; c <= counts[w]; c++) {
      const p = order[next++];
      pos[c - 1] = p;
      masks[p] = addressAndMask(k, c, addrs.subarray(p * ADDR_BYTES, (p + 1) * ADDR_BYTES));
    }
    positions.push(pos);
  });
  return { addrs, positions, masks, required: q.required.length };
}

export interface RankedDoc {
  tag: Uint8Array;
  date: number;
}

/**
 * The messages the answer names under every required keyword and under no
 * excluded one, newest first (ties by tag), and how many there are. Every
 * entry naming a returned message under a required keyword must carry the
 * check its device made: a provider naming another message, or answering
 * with another search's entries, is refused (RemoteIndexIntegrityError).
 * The total is as the provider answered; it can leave messages out.
 */
export function rankAnswer(
  keys: RemoteKeys,
  plan: SearchPlan,
  answer: SearchAnswer,
  limit: number,
): { docs: RankedDoc[]; total: number } {
  const docsOf = (w: number): Set<number> => {
    const s = new Set<number>();
    for (const p of plan.positions[w]) if (answer.hits[p] !== 0) s.add(answer.hits[p] - 1);
    return s;
  };
  const sets = plan.positions.map((_, w) => docsOf(w));
  const required = sets.slice(0, plan.required).sort((a, b) => a.size - b.size);
  const excluded = sets.slice(plan.required);
  const found: number[] = [];
  for (const d of required[0] ?? [])
    if (required.every((s) => s.has(d)) && !excluded.some((s) => s.has(d))) found.push(d);
  const ranked = found.map((d) => ({
    d,
    tag: answer.docs[d].tag,
    date: openSort(keys, answer.docs[d].tag, answer.docs[d].sort),
  }));
  ranked.sort((a, b) => b.date - a.date || compareTags(a.tag, b.tag));
  const shown = ranked.slice(0, limit);
  verifyChecks(keys, plan, answer, new Set(shown.map((r) => r.d)));
  return { docs: shown.map(({ tag, date }) => ({ tag, date })), total: ranked.length };
}

/** Throws unless every hit of a required keyword naming one of `docs` carries its entry's check. */
function verifyChecks(keys: RemoteKeys, plan: SearchPlan, answer: SearchAnswer, docs: Set<number>): void {
  const pads = new Map([...docs].map((d) => [d, docPad(keys, answer.docs[d].tag)]));
  for (let w = 0; w < plan.required; w++)
    for (const p of plan.positions[w]) {
      const pad = pads.get(answer.hits[p] - 1);
      if (pad !== undefined && (plan.masks[p] ^ pad) >>> 0 !== answer.checks[p])
        throw new RemoteIndexIntegrityError('the provider named a result its entry does not belong to');
    }
}

function compareTags(a: Uint8Array, b: Uint8Array): number {
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return a[i] - b[i];
  return 0;
}
