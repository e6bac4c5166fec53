// The best `k` hits of a query, in result order, collected while the shards
// are scored: a hit is only made into an object if it enters the top. A
// common word matches a large part of the mailbox, and one object per match
// over hundreds of shards, then sorted, was most of such a query's time.
export type SortOrder = 'relevance' | 'date';

export interface ShardHit {
  /** Document sequence number. */
  seq: number;
  score: number;
  date: number;
  /** Document number inside the shard. */
  local: number;
  /** The caller's number for the shard (CompactShard#run). */
  part: number;
}

export class TopHits {
  /** Best first; at most k. */
  private readonly hits: ShardHit[] = [];

  constructor(
    private readonly k: number,
    private readonly sort: SortOrder,
  ) {}

  /**
   * Whether a hit with these keys comes before `h`: best first, ties to the
   * newer message; or, sorting by date, newest first, then best.
   */
  private before(score: number, date: number, seq: number, h: ShardHit): boolean {
    if (this.sort === 'date' && date !== h.date) return date > h.date;
    if (score !== h.score) return score > h.score;
    return seq > h.seq;
  }

  /** Keeps the hit if it is among the best k so far (sorted insertion: k is small, most hits fail the first test). */
  offer(seq: number, score: number, date: number, local: number, part: number): void {
    const hits = this.hits;
    const full = hits.length === this.k;
    if (full && !this.before(score, date, seq, hits[this.k - 1])) return;
    let i = full ? this.k - 1 : hits.length;
    while (i > 0 && this.before(score, date, seq, hits[i - 1])) {
      hits[i] = hits[i - 1];
      i--;
    }
    hits[i] = { seq, score, date, local, part };
  }

  /** The hits kept, best first. */
  get best(): readonly ShardHit[] {
    return this.hits;
  }
}
