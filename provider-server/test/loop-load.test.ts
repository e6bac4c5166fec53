import assert from 'node:assert/strict';
import { test } from 'node:test';
import { LoopLoad } from '../src/loop-load.js';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

test('the loop is busy after a sample spent running code, idle after one spent waiting', async () => {
  const load = new LoopLoad();
  assert.equal(load.busy(), false, 'nothing measured yet');
  const end = performance.now() + 150;
  while (performance.now() < end); // one callback holding the loop
  await sleep(0);
  assert.equal(load.busy(), true);
  await sleep(150);
  assert.equal(load.busy(), false);
});
