import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { extractFeatures } from '../features/index.js';
import { loadSpamAssassin } from '../data/loaders.js';
import {
  candidates,
  decomposedTopic,
  loadPlainModel,
  plainScores,
  plainVerdict,
  publicMetadata,
} from '../plain/index.js';
import { headerFor, modelBytes } from './model-bytes.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const read = (f: string) => new Uint8Array(fs.readFileSync(path.join(here, '../default', f)));

/** Deterministic pseudo-random integers for test data. */
function lcg(seed: number) {
  let s = seed >>> 0;
  return (lo: number, hi: number) => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return lo + (s % (hi - lo + 1));
  };
}

test('reads a file built from the documented layout, weights and floats intact', () => {
  const h = headerFor({ task: 'topics', N: 5, B: 3, bIn: 8 });
  const w = Array.from({ length: 18 }, (_, i) => ((i * 37) % 255) - 127);
  const fl = w.map((x) => x / 3);
  const m = loadPlainModel(modelBytes(h, w, fl));
  assert.deepEqual([...m.weights], w);
  assert.deepEqual([...m.floatWeights!], [...Float32Array.from(fl)]);
  assert.equal(m.header.T, h.T);
});

test('plainScores equals BigInt arithmetic on random models and features', () => {
  const rnd = lcg(7);
  for (let trial = 0; trial < 50; trial++) {
    const B = [1, 2, 5, 20][trial % 4];
    const N = rnd(1, 300);
    const bIn = rnd(2, 16);
    const q = 2 ** (bIn - 1) - 1;
    const h = headerFor({ task: B === 1 ? 'spam' : 'topics', N, B, bIn, lMax: 64 });
    const w = Array.from({ length: (N + 1) * B }, () => rnd(-q, q));
    const m = loadPlainModel(modelBytes(h, w));
    const rows = [...new Set(Array.from({ length: rnd(0, Math.min(64, N)) }, () => rnd(1, N)))].sort((a, b) => a - b);
    const counts = rows.map(() => rnd(1, 15));
    const s = plainScores(m, { rows: Uint32Array.from(rows), counts: Uint32Array.from(counts) });
    for (let j = 0; j < B; j++) {
      let ref = BigInt(w[j]);
      rows.forEach((r, i) => (ref += BigInt(counts[i]) * BigInt(w[r * B + j])));
      assert.equal(BigInt(s[j]), ref);
    }
  }
});

test('rejects corrupt or inconsistent files with a clear error', () => {
  const h = headerFor({ task: 'spam', N: 4, B: 1, bIn: 8 });
  const good = modelBytes(h, [1, 2, 3, 4, 5]);
  assert.throws(() => loadPlainModel(good.slice(0, 10)), /bad magic/);
  const flipped = good.slice();
  flipped[flipped.length - 1] ^= 1;
  assert.throws(() => loadPlainModel(flipped), /SHA-256/);
  assert.throws(() => loadPlainModel(good.slice(0, good.length - 4)), /body is/);
  assert.throws(() => loadPlainModel(modelBytes(h, [1, 2, 3, 4, 128])), /outside ±127/);
  // 127 + 15·4·127 = 7,747 needs T = 14 (the format's bound for L_max = 64 would be 18); b_in = 8 needs T ≥ 8.
  assert.throws(() => loadPlainModel(modelBytes({ ...h, T: 13 }, [127, 127, 127, 127, 127])), /need T = 14/);
  assert.throws(() => loadPlainModel(modelBytes({ ...h, T: 7 }, [0, 0, 0, 0, 0])), /need T = 8/);
  assert.throws(() => loadPlainModel(modelBytes({ ...h, task: 'x' }, [0, 0, 0, 0, 0])), /unknown task/);
  assert.throws(() => loadPlainModel(modelBytes({ ...h, N: 3 }, [0, 0, 0, 0])), /disagree with featureSpec/);
  assert.throws(() => loadPlainModel(modelBytes({ ...h, labels: ['a'] }, [0, 0, 0, 0, 0])), /labels/);
  assert.throws(() => loadPlainModel(modelBytes({ ...h, formatVersion: 2 }, [0, 0, 0, 0, 0])), /version/);
});

test('plainScores refuses inadmissible features (the T bound assumes them)', () => {
  const h = headerFor({ task: 'spam', N: 10, B: 1, bIn: 8, lMax: 3 });
  const m = loadPlainModel(modelBytes(h, Array(11).fill(1)));
  const f = (rows: number[], counts: number[]) => ({ rows: Uint32Array.from(rows), counts: Uint32Array.from(counts) });
  assert.throws(() => plainScores(m, f([1, 2, 3, 4], [1, 1, 1, 1])), /exceed L_max/);
  assert.throws(() => plainScores(m, f([0], [1])), /1\.\.N/);
  assert.throws(() => plainScores(m, f([11], [1])), /1\.\.N/);
  assert.throws(() => plainScores(m, f([2, 2], [1, 1])), /strictly increasing/);
  assert.throws(() => plainScores(m, f([2], [16])), /count 16/);
  assert.throws(() => plainScores(m, f([2], [1, 1])), /length/);
  assert.equal(plainScores(m, f([1, 5, 10], [15, 15, 15]))[0], 1 + 45);
});

test("candidates equal a full sort of the scores (ties to lower index) at B = 2048, B' = 20", () => {
  const rnd = lcg(11);
  const B = 2048;
  const N = 40;
  const h = headerFor({ task: 'topics', N, B, bIn: 4 });
  // 4-bit weights over 2048 columns: many tied scores, also at the cut.
  const w = Array.from({ length: (N + 1) * B }, () => rnd(-7, 7));
  const m = loadPlainModel(modelBytes({ ...h, role: 'public' }, w));
  for (let trial = 0; trial < 20; trial++) {
    const rows = [...new Set(Array.from({ length: rnd(0, N) }, () => rnd(1, N)))].sort((a, b) => a - b);
    const f = { rows: Uint32Array.from(rows), counts: Uint32Array.from(rows.map(() => rnd(1, 15))) };
    const s = plainScores(m, f);
    for (const bPrime of [1, 20, B]) {
      const order = Array.from(s.keys()).sort((a, b) => s[b] - s[a] || a - b);
      assert.deepEqual(
        [...candidates(m, f, bPrime)],
        order.slice(0, bPrime).sort((a, b) => a - b),
      );
    }
  }
});

test('candidates: best B columns by score (ties to lower index), in index order', () => {
  const h = headerFor({ task: 'topics', N: 2, B: 5, bIn: 8 });
  // bias [0, 5, 5, -1, 3]; row 1 adds [1, 0, 0, 9, 0]
  const m = loadPlainModel(modelBytes({ ...h, role: 'public' }, [0, 5, 5, -1, 3, 1, 0, 0, 9, 0, 0, 0, 0, 0, 0]));
  const none = { rows: new Uint32Array(), counts: new Uint32Array() };
  assert.deepEqual([...candidates(m, none, 3)], [1, 2, 4]);
  const one = { rows: Uint32Array.from([1]), counts: Uint32Array.from([1]) };
  assert.deepEqual([...candidates(m, one, 2)], [1, 3]);
  assert.throws(() => candidates(m, one, 6), /B' must be/);
  // Decomposed: private model scores [0, 7, 7, 9, 9] (bias only) restricted to S'.
  const priv = loadPlainModel(modelBytes(h, [0, 7, 7, 9, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]));
  assert.equal(decomposedTopic(priv, m, none, 3), 4, "S' = {1, 2, 4}: 4 scores 9");
  assert.equal(decomposedTopic(priv, m, none, 2), 1, "S' = {1, 2}: tie at 7 goes to 1");
  assert.equal(decomposedTopic(priv, m, one, 2), 3, "S' = {1, 3}");
});

test('default spam model: verdicts on held-out SpamAssassin mail match its recorded accuracy', async () => {
  const m = loadPlainModel(read('spam.pmfm'));
  assert.equal(m.header.task, 'spam');
  assert.ok(m.header.T <= 32);
  const held = loadSpamAssassin()
    .filter((e) => e.split === 'test')
    .slice(0, 300);
  let right = 0;
  for (const e of held) if (plainVerdict(m, await extractFeatures(e.raw, m.header.featureSpec)) === e.label) right++;
  assert.ok(right / held.length >= 0.97, `accuracy ${right / held.length}`);
  const meta = JSON.parse(fs.readFileSync(path.join(here, '../default/spam.public.json'), 'utf8'));
  assert.deepEqual(meta, publicMetadata(m.header));
});

test('default topic model and its public candidate model agree on shape and spec', () => {
  const m = loadPlainModel(read('topics.pmfm'));
  const pub = loadPlainModel(read('topics-candidates.pmfm'));
  assert.equal(pub.header.role, 'public');
  assert.deepEqual(pub.header.labels, m.header.labels);
  assert.deepEqual(pub.header.featureSpec, m.header.featureSpec);
  assert.equal(m.header.B, 20);
});
