// The client's share of the spam protocol per email, on given weights and
// emails, for the `ext` bench to run the same work in Node and in Chromium's
// worker (bench/ext-worker.ts) and compare. Environment-free.
import { makeParams, type He } from '../wasm/ts/he.js';
import { newPair, spamRound } from './private-pair.js';

/** What both sides get: the model's shape and weights, and the emails' feature vectors. */
export interface ClientBench {
  N: number;
  T: number;
  bIn: number;
  fIn: number;
  weights: number[];
  emails: { rows: number[]; counts: number[] }[];
  /** Leading emails that only warm the JIT up (not timed). */
  warmup: number;
}

/** Client time per timed email (ms by `clock`) and every email's verdict. */
export function clientTimes(he: He, b: ClientBench, clock: () => number): { ms: number[]; spam: boolean[] } {
  const params = makeParams({ N: b.N, B: 1, T: b.T, b_in: b.bIn, f_in: b.fIn });
  const pair = newPair(he, params, Int32Array.from(b.weights));
  const ms: number[] = [];
  const spam: boolean[] = [];
  try {
    for (const [i, e] of b.emails.entries()) {
      const r = spamRound(pair, { rows: Uint32Array.from(e.rows), counts: Uint32Array.from(e.counts) }, clock);
      spam.push(r.spam);
      if (i >= b.warmup) ms.push(r.clientMs);
    }
  } finally {
    pair.dispose();
  }
  return { ms, spam };
}
