// The tokenizer's memo table: a word is found by its range in any text, words
// whose hashes collide are told apart by their characters, and it holds no
// more than its capacity.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { hashRange, WordTable } from '../../search/word-table.js';

const entry = (word: string) => ({ word });

describe('WordTable', () => {
  it('finds each word by its range in another text, and nothing else', () => {
    const words = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}`);
    const table = new WordTable<{ word: string }>(words.length);
    for (const w of words) table.add(entry(w), hashRange(w, 0, w.length));
    const text = `(${words.join(', ')})`;
    let at = 1;
    for (const w of words) {
      assert.equal(table.get(text, at, at + w.length, hashRange(text, at, at + w.length))?.word, w);
      at += w.length + 2;
    }
    for (const missing of ['w', 'x0', 'w0w', '']) {
      assert.equal(table.get(missing, 0, missing.length, hashRange(missing, 0, missing.length)), undefined);
    }
  });

  it('tells apart words whose hashes collide', () => {
    const table = new WordTable<{ word: string }>(8);
    for (const w of ['alpha', 'beta', 'gamma']) table.add(entry(w), 42);
    for (const w of ['beta', 'gamma', 'alpha']) assert.equal(table.get(w, 0, w.length, 42)?.word, w);
    assert.equal(table.get('delta', 0, 5, 42), undefined);
  });

  it('a word whose slots are all taken is not stored, so crafted mail cannot make lookups quadratic', () => {
    const table = new WordTable<{ word: string }>(10_000);
    const words = Array.from({ length: 5000 }, (_, i) => `collide${i}`);
    const stored = words.filter((w) => table.add(entry(w), 42));
    assert.equal(stored.length, 32, 'the first MAX_PROBES words of one slot');
    assert.equal(table.get(stored[31], 0, stored[31].length, 42)?.word, stored[31]);
    assert.equal(table.get(words[4999], 0, words[4999].length, 42), undefined);
    // Other slots are unaffected.
    assert.equal(table.add(entry('free'), 7), true);
    assert.equal(table.get('free', 0, 4, 7)?.word, 'free');
  });

  it('is full at its capacity and refuses more', () => {
    const table = new WordTable<{ word: string }>(3);
    for (const w of ['a', 'b', 'c']) {
      assert.equal(table.full, false);
      table.add(entry(w), hashRange(w, 0, 1));
    }
    assert.equal(table.full, true);
    assert.throws(() => table.add(entry('d'), hashRange('d', 0, 1)), /full/);
  });
});
