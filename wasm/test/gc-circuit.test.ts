// The circuit generators against plaintext arithmetic on many random inputs
// and on the extreme values (0, ±2^(T-1) boundaries, all-equal ties).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { argmaxCircuit, fromBits, spamCircuit, toBits } from '../ts/gc-circuit.js';
import { rand, signed } from './gc/reference.js';

const extremes = (T: number): number[] => [0, 1, 2 ** (T - 1) - 1, 2 ** (T - 1), 2 ** (T - 1) + 1, 2 ** T - 1];

test('spam circuit outputs NOT msb(y + r\u2032 mod 2^T) with T \u2212 1 AND gates', () => {
  for (const T of [2, 3, 8, 24, 30, 32]) {
    const c = spamCircuit(T);
    assert.equal(c.andCount, T - 1);
    const pairs: [number, number][] = [];
    for (const a of extremes(T)) for (const b of extremes(T)) pairs.push([a, b]);
    for (let i = 0; i < 500; i++) pairs.push([rand(T), rand(T)]);
    for (const [y, r] of pairs) {
      const expected = signed((y + r) % 2 ** T, T) >= 0 ? 1 : 0;
      assert.deepEqual(c.evaluatePlain([...toBits(y, T), ...toBits(r, T)]), [expected], `T=${T} y=${y} r=${r}`);
    }
  }
});

test('spam circuit: exhaustive over all inputs at T = 4', () => {
  const c = spamCircuit(4);
  for (let y = 0; y < 16; y++)
    for (let r = 0; r < 16; r++) {
      assert.equal(c.evaluatePlain([...toBits(y, 4), ...toBits(r, 4)])[0], signed((y + r) % 16, 4) >= 0 ? 1 : 0);
    }
});

/** Plaintext reference: S'[first argmax of signed (y_j + r_j mod 2^T)]. */
function argmaxRef(ys: number[], rs: number[], idx: number[], T: number): number {
  const v = ys.map((y, j) => signed((y + rs[j]) % 2 ** T, T));
  let best = 0;
  for (let j = 1; j < v.length; j++) if (v[j] > v[best]) best = j;
  return idx[best];
}

function runArgmax(T: number, n: number, K: number, ys: number[], rs: number[], idx: number[]): number {
  const c = argmaxCircuit(T, n, K);
  const bits = [
    ...ys.flatMap((y) => toBits(y, T)),
    ...rs.flatMap((r) => toBits(r, T)),
    ...idx.flatMap((s) => toBits(s, K)),
  ];
  return fromBits(c.evaluatePlain(bits));
}

test('argmax circuit returns the candidate index of the signed maximum (random inputs)', () => {
  for (const [T, n, K] of [
    [8, 2, 3],
    [8, 5, 11],
    [24, 10, 11],
    [32, 7, 16],
    [24, 20, 11],
  ]) {
    for (let i = 0; i < 60; i++) {
      const ys = Array.from({ length: n }, () => rand(T));
      const rs = Array.from({ length: n }, () => rand(T));
      const idx = Array.from({ length: n }, () => rand(K));
      assert.equal(runArgmax(T, n, K, ys, rs, idx), argmaxRef(ys, rs, idx, T), `T=${T} n=${n}`);
    }
  }
});

test('argmax circuit on extreme values, ties and a single candidate', () => {
  const T = 16;
  const K = 4;
  const ex = extremes(T);
  for (let i = 0; i < 300; i++) {
    const n = 1 + (i % 6);
    const ys = Array.from({ length: n }, () => ex[rand(3) % ex.length]);
    const rs = Array.from({ length: n }, () => ex[rand(3) % ex.length]);
    const idx = Array.from({ length: n }, (_, j) => j + 1);
    assert.equal(runArgmax(T, n, K, ys, rs, idx), argmaxRef(ys, rs, idx, T));
  }
  // All equal: the first candidate wins.
  assert.equal(runArgmax(T, 4, K, [5, 5, 5, 5], [0, 0, 0, 0], [9, 8, 7, 6]), 9);
  // Most negative vs most positive.
  assert.equal(runArgmax(T, 2, K, [2 ** (T - 1), 2 ** (T - 1) - 1], [0, 0], [1, 2]), 2);
});

test('argmax circuit size is about 3T + K AND gates per extra candidate', () => {
  const T = 24;
  const K = 11;
  const c20 = argmaxCircuit(T, 20, K);
  const c21 = argmaxCircuit(T, 21, K);
  assert.equal(c21.andCount - c20.andCount, T - 1 + T + T + K);
});

test('generators reject out-of-range shapes', () => {
  assert.throws(() => spamCircuit(1), RangeError);
  assert.throws(() => spamCircuit(33), RangeError);
  assert.throws(() => argmaxCircuit(24, 0, 11), RangeError);
  assert.throws(() => argmaxCircuit(24, 5, 0), RangeError);
});
