// Linear memory past 2 GiB (the build allows 4 GB): wasm returns pointers as
// signed i32, so without `>>> 0` a pointer above 2 GiB is negative in JS and
// heap views count it from the end of memory, i.e. writes, reads and wipes
// hit the wrong bytes. Slow: grows this process's wasm memory past 2 GiB
// (untouched pages, so little of it becomes resident).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { loadCore } from '../ts/core.js';
import { evaluateSpam, garbleSpam, spamChoice } from '../ts/gc.js';
import { rand, signed } from './gc/reference.js';
import { openSession } from './gc/session.js';

const core = await loadCore();
const TWO_GIB = 2 ** 31;
// Allocated until a chunk starts above 2 GiB; later buffers land there too.
const chunks: number[] = [];
do chunks.push(core.alloc(256 << 20));
while (chunks.at(-1)! >>> 0 < TWO_GIB && chunks.length < 16);

test('a buffer above 2 GiB is allocated, written, read and wiped at the right address', () => {
  const p = chunks.at(-1)!;
  assert.ok(p >= TWO_GIB, `alloc returned ${p}: a pointer above 2 GiB must come back unsigned`);

  // copyIn/copyOut and wasm agree on the bytes at p.
  const data = new Uint8Array(randomBytes(64));
  core.heap.set(data, p);
  const q = core.copyIn(data);
  assert.deepEqual(core.copyOut(p, 64), data);
  assert.equal(core.fn('pmf_ct_memeq')(p, q, 64), 1, 'wasm reads the bytes JS wrote at p');
  core.wipeAndFree(q, 64);

  // The wipe zeroes exactly p..p+64 and nothing where a signed pointer would land.
  const signedAlias = core.heap.length - (2 ** 32 - p);
  core.heap.fill(0xa5, signedAlias, signedAlias + 64);
  core.heap[p + 64] = 0x5a;
  core.wipeAndFree(p, 64); // frees the whole chunk: the space above 2 GiB is free for the next test
  chunks.pop();
  assert.ok(
    core.heap.subarray(p, p + 64).every((b) => b === 0),
    'the buffer above 2 GiB is wiped',
  );
  assert.equal(core.heap[p + 64], 0x5a, 'the byte after the buffer is untouched');
  assert.ok(
    core.heap.subarray(signedAlias, signedAlias + 64).every((b) => b === 0xa5),
    'the signed alias is untouched',
  );
});

test('OT extension and a spam comparison work with their buffers above 2 GiB', async (t) => {
  const alloc = t.mock.method(core, 'alloc');
  const s = await openSession(512);
  for (let i = 0; i < 20; i++) {
    const [y, rPrime, T] = [rand(24), rand(24), 24];
    const { message, pending } = spamChoice(s.client, { rPrime, T });
    const out = evaluateSpam(pending, garbleSpam({ y, T }, s.provider, message));
    assert.deepEqual(out, { spam: signed((y + rPrime) % 2 ** T, T) >= 0, invalid: false });
  }
  assert.ok(
    alloc.mock.calls.some((c) => c.result! >= TWO_GIB),
    'some OT/GC buffers were above 2 GiB',
  );
  chunks.forEach((c) => core.free(c));
});
