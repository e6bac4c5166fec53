// The docs/threat-model.md#non-negotiable-properties properties the lattice layer carries (docs/security.md), at the
// parameters production uses: re-randomization and flooding of everything
// that leaves the client, a provider view that is uniform and independent of
// the email, decryption only under the switched-to user key, p1 bound to the
// joint seed.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { type Features, HE_LWE_N, HE_Q1, HE_Q2 } from '../ts/he.js';
import { floodNoise } from './he/diagnostics.js';
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

/**
 * The switch to 2^Q rounds b' (±1/2) and each a'[k] at 2^(Q−1), i.e. ±1 in 2^Q units,
 * weighted by a ternary key (2/3 of it non-zero): n'·(2/3)·(1/3) ≈ 455.
 */
const ROUNDING_VARIANCE = (2048 * (2 / 3)) / 3;

/** b' (Q bits), then a'[0..n') at Q − 1 bits each. */
const unpackA = (lwe: Uint8Array, Q: number): bigint[] => {
  let acc = 0n;
  for (let i = lwe.length - 1; i >= 3; i--) acc = (acc << 8n) | BigInt(lwe[i]);
  const a = Array.from({ length: HE_LWE_N }, (_, k) => (acc >> BigInt(Q + k * (Q - 1))) & ((1n << BigInt(Q - 1)) - 1n));
  return [acc & ((1n << BigInt(Q)) - 1n), ...a];
};

describe('he security properties', () => {
  it('every extraction is freshly re-randomized: same email, same index, unlinkable ciphertexts', async () => {
    const s = await setup({ N: 5000, B: 1 });
    const email = randomEmail(5000, 100, 3);
    const acc = s.model.dot(email);
    const [x1] = s.model.extract(acc, [0], s.pk, s.ksk);
    const [x2] = s.model.extract(acc, [0], s.pk, s.ksk);
    const a1 = unpackA(x1.lwe, s.params.Q);
    const a2 = unpackA(x2.lwe, s.params.Q);
    const same = a1.filter((v, i) => v === a2[i]).length;
    assert.ok(same < 5, `${same} equal coefficients out of ${HE_LWE_N + 1}`);
    assert.notEqual(x1.mask, x2.mask);
    const d = plainDot(s.params, s.weights, email, 0);
    for (const x of [x1, x2]) assert.equal(unblind(s.params, s.decryptor.decryptLwe(x.lwe), x.mask), d);
  });

  it('what the provider decrypts, y = d + r, is uniform in Z_2^T whatever d is', async () => {
    const s = await setup({ N: 1000, B: 1, T: 24 });
    const acc = s.model.dot({ rows: new Uint32Array([7]), counts: new Uint32Array([1]) });
    const bins = new Array(16).fill(0);
    const trials = 800;
    for (let i = 0; i < trials; i++)
      bins[s.decryptor.decryptLwe(s.model.extract(acc, [0], s.pk, s.ksk)[0].lwe) >>> 20]++;
    const chi2 = bins.reduce((a, o) => a + (o - trials / 16) ** 2 / (trials / 16), 0);
    assert.ok(chi2 < 37.7, `chi-square ${chi2.toFixed(1)} (15 df, p = 0.001 critical value 37.7)`);
  });

  it('the noise after the flood does not depend on the email (KS test)', async () => {
    // Measured in Z_q right after flooding, before dropping q1 (after it,
    // rounding hides the email's noise whether or not it is flooded, so a test
    // there cannot fail; what is added later depends on the a part alone).
    // Email A: one feature (accumulator noise σ ≈ 4.6); email B: 5000 features
    // at count 15 (σ ≈ 3400). Without the flood the two samples separate completely.
    const s = await setup({ N: 20_000, B: 1, T: 24, f_in: 4 });
    const emailA = { rows: new Uint32Array([1]), counts: new Uint32Array([1]) };
    const emailB = randomEmail(20_000, 5000, 15);
    const noiseOf = (email: Features, n: number): number[] => {
      const acc = s.model.dot(email);
      const d = plainDot(s.params, s.weights, email, 0);
      return Array.from({ length: n }, () => floodNoise(s.model, s.sk, acc, 0, d, s.pk));
    };
    const A = noiseOf(emailA, 700);
    const B = noiseOf(emailB, 700);
    const critical = 1.95 * Math.sqrt(2 / 700); // α = 0.001
    const d = ks(A, B);
    assert.ok(d < critical, `KS D = ${d.toFixed(3)} ≥ ${critical.toFixed(3)}`);
    // Not vacuous: the statistic separates a shift by a quarter of the flood.
    const quarter = 2 ** (s.params.F - 2);
    assert.ok(
      ks(
        A,
        A.map((v) => v + quarter),
      ) > critical,
    );
    // The flood is there with its full width: |noise| reaches past half of 2^F.
    assert.ok(Math.max(...A.map(Math.abs)) > 2 ** (s.params.F - 1));
  });

  it('the flood shows in the visible noise at the deployed parameters (σ ≈ 28, not 21)', async () => {
    // E uniform in [−2^F, 2^F) reaches the provider as E·2^Q/q: σ = 2^(F+Q)/q/√3
    // (≈ 18.6 at F = 104 − T, Q = T + 9), on top of the rounding noise (σ ≈ 21.3:
    // the a-part travels at Q − 1 bits) and the key switch's (σ ≈ 1.3 at T = 30).
    // Without flooding the visible σ would stay ≈ 21.
    const q = Number(HE_Q1) * Number(HE_Q2);
    for (const T of [24, 30]) {
      const s = await setup({ N: 1000, B: 1, T, b_in: 8 });
      const acc = s.model.dot(randomEmail(1000, 20, 3));
      const noise = Array.from({ length: 600 }, () => visibleNoise(s, s.model.extract(acc, [0], s.pk, s.ksk)[0].lwe));
      const mean = noise.reduce((a, b) => a + b, 0) / noise.length;
      const sd = Math.sqrt(noise.reduce((a, b) => a + (b - mean) ** 2, 0) / (noise.length - 1));
      const flood = 2 ** (s.params.F + s.params.Q) / q;
      const predicted = Math.sqrt(flood ** 2 / 3 + ROUNDING_VARIANCE);
      assert.ok(
        Math.abs(sd / predicted - 1) < 0.12,
        `T = ${T}: sd ${sd.toFixed(1)} vs predicted ${predicted.toFixed(1)}`,
      );
      assert.ok(Math.max(...noise.map(Math.abs)) < flood + 100, 'bounded by the flood width plus rounding');
    }
  });

  it('refuses to send when the honest noise could exceed what flooding hides (2^(F−50)), and not before', async () => {
    // T = 32: F = 72, budget 2^22. The bound is 22·Σx (Σx with the bias row) + 1,117 (E|Z| of the
    // encryption of zero) + 1, so Σx = 190,599 is the largest email that may leave.
    const s = await setup({ N: 5000, B: 1, T: 32, b_in: 8, f_in: 10 });
    const email = (sum: number): Features => {
      const counts = [...new Array<number>(Math.floor((sum - 1) / 1023)).fill(1023), (sum - 1) % 1023];
      return { rows: Uint32Array.from(counts, (_, i) => i + 1), counts: Uint32Array.from(counts) };
    };
    assert.equal(22 * 190_599 + 1_118, 2 ** 22 - 8);
    const edge = s.model.dot(email(190_599));
    assert.equal(s.model.extract(edge, [0], s.pk, s.ksk).length, 1);
    assert.equal(s.model.floodDistance(edge), BigInt(2 ** 22 - 8) << BigInt(127 - s.params.F)); // ≈ 2^-51
    const over = s.model.dot(email(190_600));
    assert.throws(() => s.model.extract(over, [0], s.pk, s.ksk), /flooding budget/);
    const f = randomEmail(5000, 100, 3);
    const sigmaX = 1 + f.counts.reduce((a, c) => a + c, 0);
    const units = s.model.floodDistance(s.model.dot(f), 20); // 20 coefficients of one email
    assert.equal(units, BigInt(20 * (22 * sigmaX + 1_118)) << BigInt(127 - s.params.F));
  });

  it('the provider decrypts only under the user key: the model key s gives garbage', async () => {
    const s = await setup({ N: 1000, B: 1 });
    const email = randomEmail(1000, 10, 2);
    const d = plainDot(s.params, s.weights, email, 0);
    let underS = 0;
    for (let i = 0; i < 8; i++) {
      const [x] = s.model.extract(s.model.dot(email), [0], s.pk, s.ksk);
      assert.equal(unblind(s.params, s.decryptor.decryptLwe(x.lwe), x.mask), d);
      if (unblind(s.params, s.sk.forContext(s.params).decryptLwe(x.lwe), x.mask) === d) underS++;
    }
    assert.equal(underS, 0);
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
      const [x] = s.model.extract(s.model.dot(email), [0], pk, s.ksk);
      if (unblind(s.params, s.decryptor.decryptLwe(x.lwe), x.mask) !== d) wrong++;
    }
    assert.equal(wrong, 4);
  });
});
