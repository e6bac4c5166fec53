// docs/crypto.md#packed-extraction: one ciphertext for coefficients 0..count−1.
// Checked against plaintext arithmetic, against a second decryption (the
// packed ciphertext rewritten in TypeScript as the LWE ciphertexts extracted at
// each j, decrypted by the single-LWE path), for the flood on every
// coefficient, and for its validation.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HE_LWE_N, HE_N, HE_Q1, HE_Q2, packedBytes, topicCiphertexts, type HeParams } from '../ts/he.js';
import { packedHeader, packLwe } from './he/lwe-layout.js';
import { plainDot, randomEmail, setup, unblind, visibleNoise } from './he/fixtures.js';

const HEADER = 5;

/** The width-bit value at bit offset `bit` of a little-endian bit string (width ≤ 56). */
function bitsAt(buf: Uint8Array, bit: number, width: number): bigint {
  const window = new Uint8Array(8);
  window.set(buf.subarray(bit >> 3, (bit >> 3) + 8));
  const w = new DataView(window.buffer).getBigUint64(0, true);
  return (w >> BigInt(bit & 7)) & ((1n << BigInt(width)) - 1n);
}

/**
 * The LWE ciphertext a client would have extracted at j from the same switched
 * ciphertext: b'_j, then a'[i] = a[j − 2i] for 2i ≤ j, −a[n + j − 2i] otherwise
 * (mod 2^(Q−1)), in the single-LWE layout (tag 'L', version 3).
 */
function lweAt(ct: Uint8Array, p: HeParams, count: number, j: number): Uint8Array {
  const { Q } = p;
  const payload = ct.subarray(HEADER);
  const aMod = 1n << BigInt(Q - 1);
  const a = (k: number) => bitsAt(payload, count * Q + k * (Q - 1), Q - 1);
  const extracted = Array.from({ length: HE_LWE_N }, (_, i) =>
    2 * i <= j ? a(j - 2 * i) : (aMod - a(HE_N + j - 2 * i)) % aMod,
  );
  return packLwe(bitsAt(payload, j * Q, Q), extracted, Q);
}

describe('he packed extraction', () => {
  for (const [B, T] of [
    [2, 24],
    [20, 30],
    [64, 32],
  ]) {
    it(`B = ${B}, T = ${T}: every coefficient decrypts to its plaintext dot product, both ways`, async () => {
      const s = await setup({ N: 3000, B, T, b_in: 8, f_in: 4 });
      const email = randomEmail(3000, 80, 20);
      const acc = s.model.dot(email);
      const { ciphertext, masks } = s.model.extractPacked(acc, B, s.pk, s.ksk);
      assert.equal(ciphertext.length, packedBytes(s.params, B));
      const ys = s.decryptor.decryptPacked(ciphertext, B);
      for (let j = 0; j < B; j++) {
        assert.equal(unblind(s.params, ys[j], masks[j]), plainDot(s.params, s.weights, email, j), `j = ${j}`);
        assert.equal(s.decryptor.decryptLwe(lweAt(ciphertext, s.params, B, j)), ys[j], `LWE view of j = ${j}`);
      }
      acc.dispose();
    });
  }

  it('a prefix of the coefficients (count < B) packs and decrypts too', async () => {
    const s = await setup({ N: 500, B: 7, T: 26 });
    const email = randomEmail(500, 30, 5);
    const acc = s.model.dot(email);
    const { ciphertext, masks } = s.model.extractPacked(acc, 3, s.pk, s.ksk);
    const ys = s.decryptor.decryptPacked(ciphertext, 3);
    for (let j = 0; j < 3; j++)
      assert.equal(unblind(s.params, ys[j], masks[j]), plainDot(s.params, s.weights, email, j));
  });

  it('each coefficient has its own blind and flood; every call re-randomizes the a-part', async () => {
    const s = await setup({ N: 1000, B: 20, T: 30, b_in: 8 });
    const acc = s.model.dot(randomEmail(1000, 20, 3));
    const x1 = s.model.extractPacked(acc, 20, s.pk, s.ksk);
    const x2 = s.model.extractPacked(acc, 20, s.pk, s.ksk);
    assert.equal(new Set(x1.masks).size, 20, 'masks repeat within one ciphertext');
    const from = HEADER + Math.ceil((20 * s.params.Q) / 8);
    let same = 0;
    for (let i = from; i < x1.ciphertext.length; i++) if (x1.ciphertext[i] === x2.ciphertext[i]) same++;
    assert.ok(same < (x1.ciphertext.length - from) / 128, `${same} equal a-part bytes of two extractions`);
    // The flood on every coefficient, as for single extractions (he-security.test.ts):
    // σ = √(flood²/3 + rounding) ≈ 28 at T = 30, not ≈ 21 without it.
    const noise: number[] = [];
    for (let t = 0; t < 30; t++) {
      const { ciphertext } = s.model.extractPacked(acc, 20, s.pk, s.ksk);
      for (let j = 0; j < 20; j++) noise.push(visibleNoise(s, lweAt(ciphertext, s.params, 20, j)));
    }
    const mean = noise.reduce((a, b) => a + b, 0) / noise.length;
    const sd = Math.sqrt(noise.reduce((a, b) => a + (b - mean) ** 2, 0) / (noise.length - 1));
    const flood = 2 ** (s.params.F + s.params.Q) / (Number(HE_Q1) * Number(HE_Q2));
    const predicted = Math.sqrt(flood ** 2 / 3 + (HE_LWE_N * (2 / 3)) / 3);
    assert.ok(Math.abs(sd / predicted - 1) < 0.12, `sd ${sd.toFixed(1)} vs predicted ${predicted.toFixed(1)}`);
    assert.ok(Math.max(...noise.map(Math.abs)) < flood + 100);
  });

  it('what the provider decrypts is uniform on every coefficient, whatever the email', async () => {
    const s = await setup({ N: 1000, B: 4, T: 24 });
    const acc = s.model.dot({ rows: new Uint32Array([7]), counts: new Uint32Array([1]) });
    const bins = new Array(16).fill(0);
    const trials = 200;
    for (let i = 0; i < trials; i++)
      for (const y of s.decryptor.decryptPacked(s.model.extractPacked(acc, 4, s.pk, s.ksk).ciphertext, 4))
        bins[y >>> 20]++;
    const n = trials * 4;
    const chi2 = bins.reduce((a, o) => a + (o - n / 16) ** 2 / (n / 16), 0);
    assert.ok(chi2 < 37.7, `chi-square ${chi2.toFixed(1)} (15 df, p = 0.001 critical value 37.7)`);
  });

  it('refuses a wrong length, tag, version, Q, count or non-zero padding, and counts beyond B', async () => {
    const s = await setup({ N: 100, B: 3, T: 24 });
    const acc = s.model.dot(randomEmail(100, 5, 1));
    assert.throws(() => s.model.extractPacked(acc, 4, s.pk, s.ksk), /count 4 is not in \[1, 3\]/);
    assert.throws(() => s.model.extractPacked(acc, 0, s.pk, s.ksk), /count 0/);
    const { ciphertext: ct } = s.model.extractPacked(acc, 3, s.pk, s.ksk);
    const p = s.params;
    assert.deepEqual([...ct.subarray(0, HEADER)], packedHeader(p.Q, 3));
    s.decryptor.decryptPacked(ct, 3);
    const edit = (i: number, v: number) => {
      const c = ct.slice();
      c[i] = v;
      return c;
    };
    assert.throws(() => s.decryptor.decryptPacked(ct.subarray(1), 3), /wrong length/);
    assert.throws(() => s.decryptor.decryptPacked(edit(0, 0x4c), 3), /wrong length/);
    assert.throws(() => s.decryptor.decryptPacked(edit(1, 9), 3), /unsupported layout version/);
    assert.throws(() => s.decryptor.decryptPacked(edit(2, 40), 3), /invalid parameters/);
    assert.throws(() => s.decryptor.decryptPacked(edit(3, 2), 3), /invalid parameters/);
    assert.throws(() => s.decryptor.decryptPacked(ct, 2), /wrong length/);
    assert.throws(() => s.decryptor.decryptPacked(ct, 4), /count 4/);
    const bits = 3 * p.Q + HE_N * (p.Q - 1);
    assert.ok(bits % 8 !== 0, 'this layout has padding bits to test');
    assert.throws(() => s.decryptor.decryptPacked(edit(ct.length - 1, ct[ct.length - 1] | 0x80), 3), /out of range/);
  });

  it('topics use one packed ciphertext only when the candidates are every topic', () => {
    const p = { B: 20, Q: 39 } as HeParams;
    assert.deepEqual(topicCiphertexts(p, 20), { packed: true, bytes: packedBytes(p, 20) });
    assert.equal(topicCiphertexts({ ...p, B: 2048 }, 20).packed, false);
  });
});
