// docs/crypto.md#tests: measured noise against the analytic bounds, and the decryption-failure
// rate at the largest email size (a short run here; 10^5 trials in
// he-failure.slow.test.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { accumulatorNoise } from './he/diagnostics.js';
import { failureRun, plainDot, randomEmail, setup } from './he/fixtures.js';

const ETA = 21; // centered binomial: |e| ≤ 21, variance 21/2

const stats = (xs: number[]): { mean: number; sd: number; max: number } => {
  const mean = xs.reduce((a, b) => a + b, 0) / xs.length;
  const sd = Math.sqrt(xs.reduce((a, b) => a + (b - mean) ** 2, 0) / (xs.length - 1));
  return { mean, sd, max: Math.max(...xs.map(Math.abs)) };
};

describe('he noise', () => {
  it('accumulator noise: Σ x·e has the predicted variance and stays under the worst-case bound', async () => {
    // B = 4096: one row per ciphertext at offset 0, so every coefficient j is an
    // independent sample of Σ_f x_f·e_f (bias included, x = 1).
    const s = await setup({ N: 60, B: 4096, T: 24, b_in: 8, f_in: 4 });
    const email = randomEmail(60, 60, 15);
    const sumSq = 1 + email.counts.reduce((a, c) => a + c * c, 0);
    const sumX = 1 + email.counts.reduce((a, c) => a + c, 0);
    const acc = s.model.dot(email);
    const samples: number[] = [];
    for (let j = 0; j < 4096; j += 16)
      samples.push(Number(accumulatorNoise(s.model, s.sk, acc, j, plainDot(s.params, s.weights, email, j))));
    const { sd, max } = stats(samples);
    const predicted = Math.sqrt((ETA / 2) * sumSq);
    assert.ok(max <= ETA * sumX, `max |noise| ${max} ≤ worst case ${ETA * sumX}`);
    assert.ok(
      sd > 0.75 * predicted && sd < 1.25 * predicted,
      `sd ${sd.toFixed(1)} vs predicted ${predicted.toFixed(1)}`,
    );
  });

  it('L = 5000, counts 15: 0 decryption failures in 2000 trials; visible noise = rounding + flood ≪ margin', async () => {
    const { failures, noise, margin, flood } = await failureRun(2000);
    const { mean, sd, max } = stats(noise);
    // Rounding n' = 2048 ternary-weighted a-coefficients at 2^(Q−1), i.e. uniform
    // on ±1 in 2^Q units: variance n'·(2/3)·(1/3) ≈ 455 (σ ≈ 21.3), plus the flood
    // after the switch, uniform of half-width `flood`; the key switch's noise is
    // ≈ 2^-6 at T = 24 (docs/crypto.md#plaintext-and-output-modulus).
    const predicted = Math.sqrt((2048 * (2 / 3)) / 3 + flood ** 2 / 3);
    assert.equal(failures, 0);
    assert.ok(Math.abs(mean) < 2, `mean ${mean}`);
    assert.ok(sd > 0.85 * predicted && sd < 1.15 * predicted, `sd ${sd.toFixed(2)} vs ${predicted.toFixed(2)}`);
    assert.ok(max < margin / 2, `max |noise| ${max} vs decryption margin ${margin}`);
  });
});
