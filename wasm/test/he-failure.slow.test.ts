// docs/crypto.md#tests at full size: decryption-failure rate over 10^5 trials at the largest
// email (L = 5000 rows, every count at the cap), at T = 24 and at T = 32, where the key switch's
// noise is largest after the switch to 2^Q (2^(Q−54) of it). About 9 minutes each on a shared
// 2-core machine. Then the packed form at 10^5 coefficients (about 2 minutes).
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { failureRun, plainDot, randomEmail, setup, unblind } from './he/fixtures.js';

for (const T of [24, 32])
  it(`0 decryption failures in 10^5 trials at L = 5000, T = ${T}`, async () => {
    const { failures, noise, margin } = await failureRun(100_000, 5000, T);
    const max = Math.max(...noise.map(Math.abs));
    assert.equal(failures, 0);
    assert.ok(max < margin / 2, `max visible noise ${max} (flood + rounding + key switch) vs margin ${margin}`);
    console.log(`T = ${T}, 10^5 trials: 0 failures, max |visible noise| ${max}, margin ${margin}`);
  });

// The packed form (docs/crypto.md#packed-extraction) at the bundled topic model's shape: 5,000
// ciphertexts of 20 coefficients, 10^5 decryptions, each noise term as for one LWE ciphertext.
it('0 decryption failures in 10^5 packed coefficients at L = 5000, B = 20, T = 30', async () => {
  const s = await setup({ N: 20_000, B: 20, T: 30, b_in: 8, f_in: 4 });
  const email = randomEmail(20_000, 5000, 15);
  const d = Array.from({ length: 20 }, (_, j) => plainDot(s.params, s.weights, email, j));
  const acc = s.model.dot(email);
  let failures = 0;
  for (let i = 0; i < 5000; i++) {
    const { ciphertext, masks } = s.model.extractPacked(acc, 20, s.pk, s.ksk);
    const ys = s.decryptor.decryptPacked(ciphertext, 20);
    for (let j = 0; j < 20; j++) if (unblind(s.params, ys[j], masks[j]) !== d[j]) failures++;
  }
  assert.equal(failures, 0);
});
