// The file-injection attack (file-injection.ts) on what the provider stores
// and sees: no earlier query's keyword is recovered from the remote index,
// every one from the deliberately leaky baseline run the same way (so this
// test fails if the index ever reuses a search token on later mail).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { attackLeakyBaseline, attackRemoteIndex } from './file-injection.js';

test('file injection recovers no earlier query from the remote index, every one from the leaky baseline', async () => {
  const [real, leaky] = [await attackRemoteIndex(255, 24), await attackLeakyBaseline(255, 24)];
  assert.equal(real.injected, 8);
  assert.equal(real.recovered, 0, `remote index: ${real.recovered} of ${real.queries} earlier queries recovered`);
  assert.equal(leaky.recovered, leaky.queries, `baseline: ${leaky.recovered} of ${leaky.queries}`);
  // Not a property of the scheme, a limit it states: later queries name the injected mail they find.
  assert.equal(real.recoveredLater, real.queriesLater);
  assert.equal(leaky.recoveredLater, leaky.queriesLater);
});
