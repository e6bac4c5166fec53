// The compact query form must hold exactly what lunr's JSON holds, whichever
// way it was read.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CompactShard, scanLunrText } from '../../search/compact-shard.js';
import { compileQuery, parseQuery, ShardBuilder } from '../../search/lunr-shard.js';

const NASTY = ['say "hi"', 'br{ace}s', 'back\\slash', 'brack]et,', 'ünïcødé 日本語', 'tab\there', 'emoji 🚀launch'];

function builder(): ShardBuilder {
  const b = new ShardBuilder();
  NASTY.forEach((body, i) =>
    b.add({ ref: (i * 37).toString(36), subject: `s${i} rocket`, from: 'a@b.example', to: '', body }),
  );
  return b;
}

const results = (s: CompactShard, query: string) => {
  const q = compileQuery(parseQuery(query));
  return s.run(q, s.expand(q), () => 1, new Set());
};

describe('CompactShard', () => {
  it('reads lunr JSON text by scanning exactly as JSON.parse does, odd terms included', () => {
    const text = JSON.stringify(builder().toJSON());
    const full = JSON.parse(text) as { invertedIndex: [string, { _index: number }][] };
    const scanned = scanLunrText(text);
    assert.ok(scanned, 'the fast path applies to what ShardBuilder writes');
    const want: string[] = [];
    for (const [term, p] of full.invertedIndex) want[p._index] = term;
    assert.deepEqual(scanned.termOfIndex, want);
    const fast = CompactShard.fromLunrText(text, NASTY.length);
    const slow = CompactShard.fromLunrJson(full, NASTY.length);
    for (const query of ['rocket', 'hi', 'br{ace}s', 'ünïcødé', '日本語', 'launch', 's3', 'r*', '-rocket']) {
      assert.deepEqual(results(fast, query), results(slow, query), query);
    }
  });

  it('falls back to JSON.parse for text it does not recognize', () => {
    const json = builder().toJSON() as Record<string, unknown>;
    const reordered = JSON.stringify({ invertedIndex: json.invertedIndex, ...json });
    assert.equal(scanLunrText(reordered), undefined);
    assert.deepEqual(results(CompactShard.fromLunrText(reordered, NASTY.length), 'rocket').length, NASTY.length);
  });

  it('scores with the weights lunr computed, in the hot and in the sealed form', () => {
    const b = builder();
    const { termOfIndex, vectors } = b.vectors();
    const hot = CompactShard.from(termOfIndex, vectors, b.size);
    const sealed = CompactShard.fromLunrText(JSON.stringify(b.toJSON()), b.size);
    const a = results(hot, 'rocket launch');
    assert.equal(a.length, 1);
    assert.ok(a[0].score > 0);
    assert.deepEqual(results(sealed, 'rocket launch'), a);
  });
});
