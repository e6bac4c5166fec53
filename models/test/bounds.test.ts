// Proof by test that no admissible email overflows the private dot product:
// |bias + Σ x_f·w_f| < 2^(T-1) whenever the email has at most L_max rows and
// every x_f ≤ cap, so the two's-complement value modulo 2^T is the score.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { countCap, extractFeatures, makeSpec } from '../features/index.js';
import {
  chooseT,
  dotBound,
  loadPlainModel,
  modelT,
  plainScores,
  qmax,
  worstScore,
  type PlainModel,
} from '../plain/index.js';
import { MAX_T } from '../../wasm/ts/limits.js';
import { headerFor, modelBytes } from './model-bytes.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Reduce modulo 2^T and read back as a T-bit two's-complement integer. */
function wrap(d: bigint, T: number): bigint {
  const m = 1n << BigInt(T);
  const r = ((d % m) + m) % m;
  return r >= m >> 1n ? r - m : r;
}

/**
 * The admissible emails that maximize and minimize column j: the L_max rows
 * with the largest (resp. smallest) weights, each at the count cap.
 */
function extremeEmails(model: PlainModel, j: number) {
  const { N, B, L_max } = model.header;
  const cap = countCap(model.header.featureSpec);
  const rows = Array.from({ length: N }, (_, i) => i + 1);
  const w = (r: number) => model.weights[r * B + j];
  const pick = (sign: number) => {
    const chosen = rows
      .filter((r) => sign * w(r) > 0)
      .sort((a, b) => sign * (w(b) - w(a)))
      .slice(0, L_max)
      .sort((a, b) => a - b);
    return { rows: Uint32Array.from(chosen), counts: new Uint32Array(chosen.length).fill(cap) };
  };
  return [pick(1), pick(-1)];
}

function checkModel(model: PlainModel): void {
  const { B, T } = model.header;
  const half = 1n << BigInt(T - 1);
  const bound = BigInt(dotBound(model.header.b_in, countCap(model.header.featureSpec), model.header.L_max));
  let worst = 0n;
  for (let j = 0; j < B; j++) {
    for (const f of extremeEmails(model, j)) {
      const d = BigInt(plainScores(model, f)[j]);
      worst = d > worst ? d : -d > worst ? -d : worst;
      let ref = BigInt(model.weights[j]);
      f.rows.forEach((r, i) => (ref += BigInt(f.counts[i]) * BigInt(model.weights[r * B + j])));
      assert.equal(d, ref, 'plainScores is exact at the extremes');
      assert.ok(d < half && d > -half, `column ${j}: |${d}| must be < 2^${T - 1}`);
      assert.ok(d <= bound && d >= -bound);
      assert.equal(wrap(d, T), d, 'the protocol result modulo 2^T decodes to the score');
    }
  }
  const cap = countCap(model.header.featureSpec);
  assert.equal(BigInt(worstScore(model.weights, B, cap, model.header.L_max)), worst, 'worstScore is the extremes');
}

test('T is minimal and sufficient for every b_in, count cap and L', () => {
  for (let bIn = 2; bIn <= 16; bIn++)
    for (const cap of [1, 3, 15, 255])
      for (const L of [1, 100, 692, 4096, 5000, 65536]) {
        const T = chooseT(bIn, cap, L);
        const bound = BigInt(L) * BigInt(cap) * BigInt(qmax(bIn)) + BigInt(qmax(bIn));
        assert.equal(BigInt(dotBound(bIn, cap, L)), bound);
        assert.ok(bound < 1n << BigInt(T - 1), 'sufficient');
        assert.ok(bound >= 1n << BigInt(T - 2), 'minimal: T - 1 would overflow');
      }
  // Defaults: spam and topics with 4-bit counts, boolean GR-NB, all at L = 4096.
  assert.equal(chooseT(14, 15, 4096), 30);
  assert.equal(chooseT(16, 1, 4096), 29);
});

test('a model at the limits reaches the bound exactly and still does not wrap', () => {
  for (const [bIn, fIn, lMax, boolean] of [
    [14, 4, 64, false],
    [16, 4, 32, true],
    [8, 10, 16, false],
  ] as const) {
    const N = lMax + 5;
    const h = headerFor({ task: 'topics', N, B: 2, bIn, fIn, lMax, boolean });
    const q = qmax(bIn);
    // Column 0 all +qmax, column 1 all -qmax, bias included.
    const w = Array.from({ length: (N + 1) * 2 }, (_, i) => (i % 2 === 0 ? q : -q));
    const m = loadPlainModel(modelBytes(h, w));
    checkModel(m);
    const [maxEmail] = extremeEmails(m, 0);
    assert.equal(plainScores(m, maxEmail)[0], dotBound(bIn, countCap(m.header.featureSpec), lMax));
  }
});

test('random models: every extreme admissible email stays inside 2^(T-1)', () => {
  let s = 12345;
  const rnd = (n: number) => ((s = (Math.imul(s, 1103515245) + 12345) >>> 0) % n) - Math.floor(n / 2);
  for (let trial = 0; trial < 20; trial++) {
    const bIn = 2 + (trial % 15);
    const N = 50 + trial;
    const h = headerFor({ task: 'spam', N, B: 1, bIn, lMax: 40 });
    const q = qmax(bIn);
    const w = Array.from({ length: N + 1 }, () => Math.max(-q, Math.min(q, rnd(2 * q + 1))));
    checkModel(loadPlainModel(modelBytes(h, w)));
  }
});

test('the default models cannot overflow, at the smallest T their weights allow', () => {
  for (const f of ['spam.pmfm', 'topics.pmfm', 'topics-candidates.pmfm']) {
    const m = loadPlainModel(new Uint8Array(fs.readFileSync(path.join(here, '../default', f))));
    const { B, b_in, L_max, T, featureSpec } = m.header;
    assert.ok(T <= 32, `${f}: T = ${T}`);
    checkModel(m);
    assert.equal(T, modelT(m.weights, B, b_in, countCap(featureSpec), L_max), `${f}: T = ${T} is not minimal`);
  }
});

test("a model's T may be below the format's bound when its weights allow, never below what they need", () => {
  // Weights mostly small, as trained models are: the 40 rows at the cap reach far less than 40·cap·qmax.
  const N = 200;
  const h = headerFor({ task: 'spam', N, B: 1, bIn: 12, fIn: 4, lMax: 40 });
  const w = Array.from({ length: N + 1 }, (_, i) => (i === 7 ? qmax(12) : ((i * 37) % 21) - 10));
  const need = modelT(Int32Array.from(w), 1, 12, 15, 40);
  assert.ok(need < chooseT(12, 15, 40), `${need} vs ${chooseT(12, 15, 40)}`);
  const m = loadPlainModel(modelBytes({ ...h, T: need }, w));
  checkModel(m);
  assert.throws(() => loadPlainModel(modelBytes({ ...h, T: need - 1 }, w)), new RegExp(`need T = ${need}`));
});

test('the extractor only produces admissible emails, however long the message', async () => {
  const spec = makeSpec({ N: 1 << 20, fIn: 4, lMax: 256 });
  const h = headerFor({ task: 'spam', N: spec.N, B: 1, bIn: 14, fIn: 4, lMax: 256 });
  const m = loadPlainModel(modelBytes(h, new Int32Array(spec.N + 1).fill(qmax(14))));
  const body = Array.from({ length: 5000 }, (_, i) => `w${i} repeat`).join(' ');
  const f = await extractFeatures(`Subject: long\n\n${body}`, spec);
  assert.equal(f.rows.length, 256);
  assert.ok(f.counts.every((c) => c >= 1 && c <= 15));
  const d = plainScores(m, f)[0];
  assert.ok(Math.abs(d) < 2 ** (m.header.T - 1));
});

test("the Python training's MAX_T is the lattice layer's (wasm/ts/limits.ts)", () => {
  const py = fs.readFileSync(path.join(here, '../pmf_models/quantize.py'), 'utf8');
  assert.equal(Number(/^MAX_T = (\d+)/m.exec(py)?.[1]), MAX_T);
});
