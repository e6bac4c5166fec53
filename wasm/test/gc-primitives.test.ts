// The GC/OT primitives against independent references: ChaCha20 and the label
// hash against Node's OpenSSL, GF(2^128) against schoolbook code, the
// transpose and circuit loader through their public effects.
import assert from 'node:assert/strict';
import { createCipheriv, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { loadCore } from '../ts/core.js';
import { spamCircuit } from '../ts/gc-circuit.js';
import { Status } from '../ts/status.js';
import { fromBig, gcHash, gfMul, toBig } from './gc/reference.js';

const core = await loadCore();

function chacha20(key: Uint8Array, nonce: Uint8Array, counter: number, nblocks: number): Uint8Array {
  return core.withBuffers([key, nonce], (pk, pn) => {
    const po = core.alloc(64 * nblocks);
    core.fn('pmf_gc_chacha20')(pk, pn, counter, po, nblocks);
    const out = core.copyOut(po, 64 * nblocks);
    core.free(po);
    return out;
  });
}

test('SIMD ChaCha20 keystream equals OpenSSL chacha20 for many keys, counters and lengths', () => {
  for (const nblocks of [1, 2, 3, 4, 5, 7, 8, 33]) {
    const key = randomBytes(32);
    const nonce = randomBytes(12);
    const counter = nblocks === 33 ? 0xfffffff0 - 40 : nblocks * 1000;
    const iv = Buffer.concat([Buffer.from(new Uint32Array([counter]).buffer), nonce]);
    const expected = createCipheriv('chacha20', key, iv).update(Buffer.alloc(64 * nblocks));
    assert.deepEqual(Buffer.from(chacha20(key, nonce, counter, nblocks)), expected, `nblocks=${nblocks}`);
  }
});

test('the garbler\'s input labels from a gc message\'s seed are the OpenSSL ChaCha20 keystream under seed ‖ "pmf-gc-glabels-1"', () => {
  for (const n of [1, 3, 4, 5, 26, 600]) {
    const seed = randomBytes(16);
    const labels = core.withBuffers([seed], (ps) => {
      const po = core.alloc(16 * n);
      core.fn('pmf_gc_garbler_labels')(ps, n, po);
      const o = core.copyOut(po, 16 * n);
      core.free(po);
      return o;
    });
    const key = Buffer.concat([seed, Buffer.from('pmf-gc-glabels-1')]);
    const expected = createCipheriv('chacha20', key, Buffer.alloc(16)).update(Buffer.alloc(16 * n));
    assert.deepEqual(Buffer.from(labels), expected, `n=${n}`);
  }
});

test('label hash equals a ChaCha20 block from OpenSSL (RFC 8439), for every lane and tweak', () => {
  for (const n of [1, 3, 4, 9]) {
    const x = randomBytes(16 * n);
    const tweak = BigInt(Math.floor(Math.random() * 2 ** 40)) * 4097n;
    const out = core.withBuffers([x], (px) => {
      const po = core.alloc(16 * n);
      core.fn('pmf_gc_hash')(px, n, Number(tweak & 0xffffffffn), Number(tweak >> 32n), po);
      const o = core.copyOut(po, 16 * n);
      core.free(po);
      return o;
    });
    for (let i = 0; i < n; i++) {
      assert.deepEqual(out.subarray(16 * i, 16 * i + 16), gcHash(x.subarray(16 * i, 16 * i + 16), tweak + BigInt(i)));
    }
  }
});

test('label hash known-answer vectors (pins the hash, and so the gc wire format)', () => {
  const hash = (x: Uint8Array, tweak: bigint): string =>
    core.withBuffers([x], (px) => {
      const po = core.alloc(16);
      core.fn('pmf_gc_hash')(px, 1, Number(tweak & 0xffffffffn), Number(tweak >> 32n), po);
      const o = Buffer.from(core.copyOut(po, 16)).toString('hex');
      core.free(po);
      return o;
    });
  assert.equal(hash(new Uint8Array(16), 0n), 'b5db40424585fe34c973453832093401');
  const x = Uint8Array.from({ length: 16 }, (_, i) => i);
  assert.equal(hash(x, 0x0123456789abcdefn), '21901954c27b5c6d9ce80bb76604f5a4');
});

test('label hash: a one-bit change of input or tweak changes about half the output bits', () => {
  const x = new Uint8Array(randomBytes(16));
  const h = gcHash(x, 5n);
  let flipped = 0;
  for (let bit = 0; bit < 128; bit++) {
    const y = x.slice();
    y[bit >> 3] ^= 1 << (bit & 7);
    const d = toBig(gcHash(y, 5n)) ^ toBig(h);
    flipped += d.toString(2).split('1').length - 1;
  }
  const avg = flipped / 128;
  assert.ok(avg > 56 && avg < 72, `average flipped bits ${avg}`);
  assert.notDeepEqual(gcHash(x, 6n), h);
});

test('GF(2^128) multiplication equals the schoolbook reference, including edge operands', () => {
  const edge = [0n, 1n, 2n, 1n << 127n, (1n << 128n) - 1n, 0x87n, 1n << 64n, (1n << 64n) - 1n];
  const cases: [bigint, bigint][] = [];
  for (const a of edge) for (const b of edge) cases.push([a, b]);
  for (let i = 0; i < 200; i++) cases.push([toBig(randomBytes(16)), toBig(randomBytes(16))]);
  for (const [a, b] of cases) {
    const out = core.withBuffers([fromBig(a), fromBig(b), new Uint8Array(16)], (pa, pb, po) => {
      core.fn('pmf_gc_gf128_mul')(pa, pb, po);
      return core.copyOut(po, 16);
    });
    assert.equal(toBig(out), gfMul(a, b), `${a.toString(16)} * ${b.toString(16)}`);
  }
});

test('the circuit loader rejects malformed circuits', () => {
  const good = spamCircuit(8).bytes;
  const check = (bytes: Uint8Array): number =>
    core.withBuffers([bytes], (p) => core.fn('pmf_gc_circuit_check')(p, bytes.length));
  assert.equal(check(good), 7);
  const words = (): Uint32Array => new Uint32Array(good.slice().buffer);
  const bad: [string, Uint32Array | Uint8Array][] = [];
  bad.push(['truncated', good.slice(0, good.length - 4)]);
  let w = words();
  w[4 + 1] = 10_000; // operand out of range
  bad.push(['operand range', w]);
  w = words();
  w[4 + 1] = w[4 + 3]; // reads its own output
  bad.push(['read before write', w]);
  w = words();
  w[4] = 7; // unknown op
  bad.push(['unknown op', w]);
  w = words();
  w[4 + 4 + 3] = w[4 + 3]; // second gate rewrites the first gate's output
  bad.push(['double write', w]);
  w = words();
  w[2] = 0xffffffff; // gate count overflow
  bad.push(['huge count', w]);
  for (const [name, b] of bad) {
    const bytes = new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
    assert.equal(check(bytes), Status.BadCircuit, name);
  }
});

test('the KOS bucket accumulator leaves no secret term in wasm memory once it returns', () => {
  // One term: every bucket the term lands in holds t itself, so any copy left on the wasm
  // stack shows up as t's 16 bytes (our own copies of the inputs are wiped by withBuffers).
  const chi = new Uint8Array(randomBytes(16));
  const t = new Uint8Array(randomBytes(16));
  core.withBuffers([chi, t, new Uint8Array(16)], (pc, pt, po) => core.fn('pmf_gc_gf128_dot')(pc, pt, 1, po));
  assert.equal(Buffer.from(core.heap.buffer).indexOf(t), -1, 'a copy of t remains in wasm memory');
});

test('the KOS bucket accumulator computes sum chi_i * t_i like the schoolbook reference', () => {
  for (const n of [1, 2, 17, 300]) {
    const chi = new Uint8Array(randomBytes(16 * n));
    const t = new Uint8Array(randomBytes(16 * n));
    if (n === 2) chi.fill(0xff, 0, 16); // all digits 15
    let expected = 0n;
    for (let i = 0; i < n; i++) {
      expected ^= gfMul(toBig(chi.subarray(16 * i, 16 * i + 16)), toBig(t.subarray(16 * i, 16 * i + 16)));
    }
    const out = core.withBuffers([chi, t, new Uint8Array(16)], (pc, pt, po) => {
      core.fn('pmf_gc_gf128_dot')(pc, pt, n, po);
      return core.copyOut(po, 16);
    });
    assert.equal(toBig(out), expected, `n=${n}`);
  }
});
