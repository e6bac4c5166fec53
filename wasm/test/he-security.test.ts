// PROTOCOL.md §0 properties that the lattice layer carries: re-randomization
// and flooding of everything that leaves the client (property 2), a provider
// view that is uniform and independent of the email (property 1), p1 bound to
// the joint seed (property 4) and validation of what the other side sends.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Features, HE_Q1, HE_Q2 } from '../ts/he.js';
import { plainDot, randomEmail, setup, unblind, visibleNoise } from './he/fixtures.js';

/** Two-sample Kolmogorov–Smirnov statistic. */
function ks(a: number[], b: number[]): number {
  const xs = [...new Set([...a, ...b])].sort((u, v) => u - v);
  const sa = [...a].sort((u, v) => u - v);
  const sb = [...b].sort((u, v) => u - v);
  let ia = 0;
  let ib = 0;
  let d = 0;
  for (const x of xs) {
    while (ia < sa.length && sa[ia] <= x) ia++;
    while (ib < sb.length && sb[ib] <= x) ib++;
    d = Math.max(d, Math.abs(ia / sa.length - ib / sb.length));
  }
  return d;
}

const unpackA = (lwe: Uint8Array, Q: number): bigint[] => {
  let acc = 0n;
  for (let i = lwe.length - 1; i >= 3; i--) acc = (acc << 8n) | BigInt(lwe[i]);
  return Array.from({ length: 4097 }, (_, i) => (acc >> BigInt(i * Q)) & ((1n << BigInt(Q)) - 1n));
};

describe('he security properties', () => {
  it('every extraction is freshly re-randomized: same email, same index, unlinkable ciphertexts', async () => {
    const s = await setup({ N: 5000, B: 1 });
    const email = randomEmail(5000, 100, 3);
    const acc = s.model.dot(email);
    const [x1] = s.model.extract(acc, [0], s.pk);
    const [x2] = s.model.extract(acc, [0], s.pk);
    const a1 = unpackA(x1.lwe, s.params.Q);
    const a2 = unpackA(x2.lwe, s.params.Q);
    const same = a1.filter((v, i) => v === a2[i]).length;
    assert.ok(same < 5, `${same} equal coefficients out of 4097`);
    assert.notEqual(x1.mask, x2.mask);
    const d = plainDot(s.params, s.weights, email, 0);
    for (const x of [x1, x2]) assert.equal(unblind(s.params, s.sk.decryptLwe(x.lwe, s.params), x.mask), d);
  });

  it('what the provider decrypts, y = d + r, is uniform in Z_2^T whatever d is', async () => {
    const s = await setup({ N: 1000, B: 1, T: 24 });
    const acc = s.model.dot({ rows: new Uint32Array([7]), counts: new Uint32Array([1]) });
    const bins = new Array(16).fill(0);
    const trials = 800;
    for (let i = 0; i < trials; i++) bins[s.sk.decryptLwe(s.model.extract(acc, [0], s.pk)[0].lwe, s.params) >>> 20]++;
    const chi2 = bins.reduce((a, o) => a + (o - trials / 16) ** 2 / (trials / 16), 0);
    assert.ok(chi2 < 37.7, `chi-square ${chi2.toFixed(1)} (15 df, p = 0.001 critical value 37.7)`);
  });

  it('provider-visible noise after flooding does not depend on the email (KS test)', async () => {
    // Email A: one feature (accumulator noise σ ≈ 4.6 before §2.5). Email B:
    // 5000 features at count 15 (σ ≈ √(10.5·5000·225) ≈ 3400).
    const s = await setup({ N: 20_000, B: 1, T: 24, f_in: 4 });
    const emailA = { rows: new Uint32Array([1]), counts: new Uint32Array([1]) };
    const emailB = randomEmail(20_000, 5000, 15);
    const noiseOf = (email: Features, n: number): number[] => {
      const acc = s.model.dot(email);
      return Array.from({ length: n }, () => visibleNoise(s, s.model.extract(acc, [0], s.pk)[0].lwe));
    };
    const A = noiseOf(emailA, 700);
    const B = noiseOf(emailB, 700);
    const d = ks(A, B);
    const critical = 1.95 * Math.sqrt(2 / 700); // α = 0.001
    assert.ok(d < critical, `KS D = ${d.toFixed(3)} ≥ ${critical.toFixed(3)}`);
    // The same statistic separates distributions shifted by half a σ, so it
    // is not vacuous at this sample size.
    assert.ok(
      ks(
        A,
        A.map((v) => v + 8),
      ) > critical,
    );
  });

  it('flooding is applied with the configured width: at Q = 52 the scaled flood shows in the visible noise', async () => {
    // E uniform in [−2^F, 2^F) reaches the provider as E·2^Q/q: σ = 2^(F+Q)/q/√3
    // (≈ 37 at F = 62, ≈ 18.5 at F = 61), on top of the rounding noise (σ ≈ 15.1).
    // Without flooding the visible σ would stay ≈ 15.1.
    const q = Number(HE_Q1) * Number(HE_Q2);
    for (const F of [62, 61]) {
      const s = await setup({ N: 1000, B: 1, T: 32, Q: 52, F, b_in: 8 });
      const acc = s.model.dot(randomEmail(1000, 20, 3));
      const noise = Array.from({ length: 600 }, () => visibleNoise(s, s.model.extract(acc, [0], s.pk)[0].lwe));
      const mean = noise.reduce((a, b) => a + b, 0) / noise.length;
      const sd = Math.sqrt(noise.reduce((a, b) => a + (b - mean) ** 2, 0) / (noise.length - 1));
      const predicted = Math.sqrt((2 ** (F + 52) / q) ** 2 / 3 + 228);
      assert.ok(
        Math.abs(sd / predicted - 1) < 0.12,
        `F = ${F}: sd ${sd.toFixed(1)} vs predicted ${predicted.toFixed(1)}`,
      );
      const half = 2 ** (F + 52) / q;
      assert.ok(Math.max(...noise.map(Math.abs)) < half + 100, 'bounded by the flood width plus rounding');
    }
  });

  it('refuses to send when the honest noise could exceed what flooding hides (2^(F−40))', async () => {
    const s = await setup({ N: 5000, B: 1, F: 58, f_in: 4 });
    const light = s.model.dot(randomEmail(5000, 100, 15));
    assert.equal(s.model.extract(light, [0], s.pk).length, 1);
    const heavy = s.model.dot(randomEmail(5000, 1000, 15));
    assert.throws(() => s.model.extract(heavy, [0], s.pk), /flooding budget/);
  });

  it('p1 is bound to the joint seed: a p0 made for another nonce does not decrypt', async () => {
    const s = await setup({ N: 1000, B: 1 });
    const providerSeed = s.he.randomSeed();
    const nonce = s.he.randomSeed();
    const foreign = s.sk.publicKeyFor(providerSeed, s.he.randomSeed());
    const pk = s.he.loadPublicKey(foreign, providerSeed, nonce);
    const email = randomEmail(1000, 10, 2);
    const d = plainDot(s.params, s.weights, email, 0);
    let wrong = 0;
    for (let i = 0; i < 4; i++) {
      const [x] = s.model.extract(s.model.dot(email), [0], pk);
      if (unblind(s.params, s.sk.decryptLwe(x.lwe, s.params), x.mask) !== d) wrong++;
    }
    assert.equal(wrong, 4);
  });
});
