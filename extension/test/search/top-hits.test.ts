// TopHits keeps exactly what sorting every hit and cutting at k keeps.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { TopHits, type ShardHit } from '../../search/top-hits.js';
import { rng } from './corpus.js';

const byScore = (a: ShardHit, b: ShardHit) => b.score - a.score || b.seq - a.seq;
const byDate = (a: ShardHit, b: ShardHit) => b.date - a.date || byScore(a, b);

describe('TopHits', () => {
  it('equals a full sort cut at k, ties in score and date included, for both orders', () => {
    const rand = rng(3);
    for (const k of [1, 5, 20, 300]) {
      // Few distinct scores and dates, so ties are common; sequence numbers are unique.
      const hits: ShardHit[] = Array.from({ length: 250 }, (_, i) => ({
        seq: (i * 7919) % 1000,
        score: Math.floor(rand() * 8) / 4,
        date: Math.floor(rand() * 5),
        local: i,
        part: i % 3,
      }));
      for (const [sort, cmp] of [
        ['relevance', byScore],
        ['date', byDate],
      ] as const) {
        const top = new TopHits(k, sort);
        for (const h of hits) top.offer(h.seq, h.score, h.date, h.local, h.part);
        assert.deepEqual(top.best, [...hits].sort(cmp).slice(0, k), `${sort} k=${k}`);
      }
    }
  });
});
