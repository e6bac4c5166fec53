// docs/crypto.md#tests at full size: decryption-failure rate over 10^5 trials at the largest
// email (L = 5000 rows, every count at the cap), at T = 24 and at T = 32, where the key switch's
// noise is largest after the switch to 2^Q (2^(Q−54) of it). About 9 minutes each on a shared
// 2-core machine.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { failureRun } from './he/fixtures.js';

for (const T of [24, 32])
  it(`0 decryption failures in 10^5 trials at L = 5000, T = ${T}`, async () => {
    const { failures, noise, margin } = await failureRun(100_000, 5000, T);
    const max = Math.max(...noise.map(Math.abs));
    assert.equal(failures, 0);
    assert.ok(max < margin / 2, `max visible noise ${max} (flood + rounding + key switch) vs margin ${margin}`);
    console.log(`T = ${T}, 10^5 trials: 0 failures, max |visible noise| ${max}, margin ${margin}`);
  });
