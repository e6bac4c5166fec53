import assert from 'node:assert/strict';
import { test } from 'node:test';
import { loadCore } from '../ts/core.js';

test('loads once and reports the expected ABI', async () => {
  const [a, b] = await Promise.all([loadCore(), loadCore()]);
  assert.equal(a, b);
  assert.equal(a.fn('pmf_abi_version')(), 5);
});

test('ctEqual agrees with a plain comparison on equal, unequal and edge inputs', async () => {
  const core = await loadCore();
  const cases: Array<[number[], number[]]> = [
    [[], []],
    [[1], [1]],
    [[1], [2]],
    [
      [0, 0, 0, 1],
      [0, 0, 0, 0],
    ],
    [
      [255, 255],
      [255, 255],
    ],
  ];
  for (const [x, y] of cases) {
    const expected = x.length === y.length && x.every((v, i) => v === y[i]);
    assert.equal(core.ctEqual(Uint8Array.from(x), Uint8Array.from(y)), expected, `${x} vs ${y}`);
  }
  // Every single-bit flip in a 64-byte buffer is detected.
  const base = core.randomBytes(64);
  for (let bit = 0; bit < 512; bit++) {
    const flipped = base.slice();
    flipped[bit >> 3] ^= 1 << (bit & 7);
    assert.equal(core.ctEqual(base, flipped), false);
  }
  assert.equal(core.ctEqual(base, base.slice()), true);
});

test('randomBytes is fresh and not degenerate', async () => {
  const core = await loadCore();
  const a = core.randomBytes(4096);
  const b = core.randomBytes(4096);
  assert.notDeepEqual(a, b);
  // Byte histogram of 8192 uniform bytes: each value ~32; a stuck or
  // constant generator fails by a wide margin.
  const counts = new Array(256).fill(0);
  for (const v of [...a, ...b]) counts[v]++;
  assert.ok(
    Math.max(...counts) < 80 && Math.min(...counts) > 5,
    `histogram ${Math.min(...counts)}..${Math.max(...counts)}`,
  );
});
