// docs/crypto.md#tests at full size: decryption-failure rate over 10^5 trials at the largest
// email (L = 5000 rows, every count at the cap). About 3 minutes.
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { failureRun } from './he/fixtures.js';

it('0 decryption failures in 10^5 trials at L = 5000', async () => {
  const { failures, noise, margin } = await failureRun(100_000);
  const max = Math.max(...noise.map(Math.abs));
  assert.equal(failures, 0);
  assert.ok(max < margin / 2, `max visible noise ${max} (flood + rounding) vs margin ${margin}`);
  console.log(`10^5 trials: 0 failures, max |visible noise| ${max}, margin ${margin}`);
});
