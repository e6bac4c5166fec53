// docs/crypto.md#tests: homomorphic results equal plaintext arithmetic mod 2^T on random
// models and emails, for every packing width the protocol uses.
import assert from 'node:assert/strict';
import { randomInt } from 'node:crypto';
import { describe, it } from 'node:test';
import { A_BYTES_PER_CT, makeParams, type ClientModel } from '../ts/he.js';
import { MAX_Q } from '../ts/limits.js';
import { plainDot, randomEmail, randomWeights, setup, unblind } from './he/fixtures.js';

function pickIndices(B: number): number[] {
  if (B <= 5) return Array.from({ length: B }, (_, j) => j);
  const s = new Set([0, B - 1]);
  while (s.size < 10) s.add(randomInt(0, B));
  return [...s];
}

describe('he homomorphic correctness', () => {
  for (const [B, N] of [
    [1, 10_000],
    [2, 5_000],
    [5, 2_000],
    [128, 100],
    [2048, 5],
    [4096, 3],
  ]) {
    it(`B = ${B}, N = ${N}: decrypt(extract(dot)) − mask = bias + Σ x·w mod 2^T`, async () => {
      const s = await setup({ N, B, T: 24, b_in: 8, f_in: 4 });
      for (let trial = 0; trial < 2; trial++) {
        const email = randomEmail(N, Math.min(N, 60), 20); // counts above 15 get capped
        const acc = s.model.dot(email);
        for (const x of s.model.extract(acc, pickIndices(B), s.pk, s.ksk)) {
          const y = s.decryptor.decryptLwe(x.lwe);
          assert.equal(unblind(s.params, y, x.mask), plainDot(s.params, s.weights, email, x.index), `j = ${x.index}`);
        }
        acc.dispose();
      }
    });
  }

  it('wrap-around: sums far beyond 2^T still decrypt mod 2^T (T = 10, all weights −127 or +127)', async () => {
    for (const sign of [-1, 1]) {
      const w = randomWeights(makeParams({ N: 3000, B: 5, T: 10 }), () => sign * 127);
      const t = await setup({ N: 3000, B: 5, T: 10, b_in: 8, f_in: 4 }, w);
      const email = randomEmail(3000, 2000, 15); // |Σ| ≈ 3.8M ≫ 2^10
      const acc = t.model.dot(email);
      for (const x of t.model.extract(acc, [0, 4], t.pk, t.ksk))
        assert.equal(unblind(t.params, t.decryptor.decryptLwe(x.lwe), x.mask), plainDot(t.params, w, email, x.index));
    }
  });

  // Production's edges (Q = T + Q_MINUS_T), and the largest Q the layer accepts, which no package uses.
  for (const [T, nonProduction] of [
    [32, {}],
    [32, { Q: MAX_Q }],
    [8, {}],
  ] as const) {
    it(`edge parameters T = ${T}, ${JSON.stringify(nonProduction)} (largest flood): still exact`, async () => {
      const s = await setup({ N: 3000, B: 2, T, b_in: 8, f_in: 4 }, undefined, nonProduction);
      for (let trial = 0; trial < 3; trial++) {
        const email = randomEmail(3000, 500, 15);
        const acc = s.model.dot(email);
        for (const x of s.model.extract(acc, [0, 1], s.pk, s.ksk))
          assert.equal(
            unblind(s.params, s.decryptor.decryptLwe(x.lwe), x.mask),
            plainDot(s.params, s.weights, email, x.index),
          );
      }
    });
  }

  it('round trip: with a zero bias, one feature decrypts to its row, coefficient by coefficient', async () => {
    const p = { N: 2, B: 4096, T: 16, b_in: 16 };
    const limit = 2 ** 15 - 1;
    const w = new Int32Array(3 * 4096);
    for (let i = 4096; i < w.length; i++) w[i] = randomInt(-limit, limit + 1);
    const s = await setup(p, w);
    const acc = s.model.dot({ rows: new Uint32Array([2]), counts: new Uint32Array([1]) });
    for (const x of s.model.extract(acc, pickIndices(4096), s.pk, s.ksk)) {
      const d = unblind(s.params, s.decryptor.decryptLwe(x.lwe), x.mask);
      assert.equal(d >= 2 ** 15 ? d - 2 ** 16 : d, w[2 * 4096 + x.index]);
    }
  });

  it('expanding a on demand gives the same plaintexts as the cached model', async () => {
    const s = await setup({ N: 9000, B: 3 });
    const lazy = s.he.newClientModel(s.params, { aCacheBytes: 0 });
    for (const rec of s.sk.forContext(s.params).encryptModel(s.weights)) lazy.push(rec);
    lazy.finish();
    const email = randomEmail(9000, 300, 15);
    for (const model of [s.model, lazy]) {
      const acc = model.dot(email);
      for (const x of model.extract(acc, [0, 1, 2], s.pk, s.ksk))
        assert.equal(
          unblind(s.params, s.decryptor.decryptLwe(x.lwe), x.mask),
          plainDot(s.params, s.weights, email, x.index),
        );
    }
  });

  it('a cache of a filled as dot products touch the model: at most its limit held, the same plaintexts as on demand', async () => {
    // The topics bench's geometry at the bundled topic model's T: B = 2048, two rows per ciphertext, 692 features.
    const s = await setup({ N: 2000, B: 2048, T: 29, b_in: 14, f_in: 4 });
    const { ctCount } = s.model.context.layout;
    assert.equal(s.model.aCachedBytes, ctCount * A_BYTES_PER_CT, 'a model that fits is expanded at load');
    const limit = 300;
    const build = (aCacheBytes: number): ClientModel => {
      const m = s.he.newClientModel(s.params, { aCacheBytes });
      for (const rec of s.sk.forContext(s.params).encryptModel(s.weights)) m.push(rec);
      return m.finish();
    };
    const cached = build(limit * A_BYTES_PER_CT + A_BYTES_PER_CT - 1);
    const onDemand = build(0);
    assert.equal(cached.aCachedBytes, 0, 'a model that does not fit is not expanded at load');
    for (let email = 0; email < 3; email++) {
      const features = randomEmail(2000, 692, 15);
      for (const model of [cached, onDemand]) {
        const acc = model.dot(features);
        for (const x of model.extract(acc, pickIndices(2048), s.pk, s.ksk))
          assert.equal(
            unblind(s.params, s.decryptor.decryptLwe(x.lwe), x.mask),
            plainDot(s.params, s.weights, features, x.index),
            `email ${email}, j = ${x.index}`,
          );
        acc.dispose();
      }
      assert.equal(cached.aCachedBytes, limit * A_BYTES_PER_CT, 'the cache fills to its limit and no further');
      assert.equal(onDemand.aCachedBytes, 0);
    }
    cached.dispose();
    onDemand.dispose();
  });

  it('each model has its own cache: the next package (new key, new seeds) never reads the last one’s a', async () => {
    const p = { N: 200, B: 2048, T: 29, b_in: 14, f_in: 4 };
    const [older, newer] = [await setup(p), await setup(p)];
    const build = (s: typeof older): ClientModel => {
      const m = s.he.newClientModel(s.params, { aCacheBytes: 50 * A_BYTES_PER_CT });
      for (const rec of s.sk.forContext(s.params).encryptModel(s.weights)) m.push(rec);
      return m.finish();
    };
    const models = [build(older), build(newer)];
    for (let email = 0; email < 4; email++) {
      const features = randomEmail(200, 150, 15);
      [older, newer].forEach((s, i) => {
        const acc = models[i].dot(features);
        for (const x of models[i].extract(acc, [0, 2047], s.pk, s.ksk))
          assert.equal(
            unblind(s.params, s.decryptor.decryptLwe(x.lwe), x.mask),
            plainDot(s.params, s.weights, features, x.index),
            `model ${i}, email ${email}`,
          );
        acc.dispose();
      });
    }
    models.forEach((m) => m.dispose());
  });

  it('streams a model given as chunks of rows, identical in effect to one array', async () => {
    const s = await setup({ N: 5000, B: 2 });
    const chunks = [s.weights.subarray(0, 2 * 1234), s.weights.subarray(2 * 1234)];
    const m = s.he.newClientModel(s.params);
    for (const rec of s.sk.forContext(s.params).encryptModel(chunks)) m.push(rec);
    m.finish();
    const email = randomEmail(5000, 50, 3);
    const [x] = m.extract(m.dot(email), [1], s.pk, s.ksk);
    assert.equal(unblind(s.params, s.decryptor.decryptLwe(x.lwe), x.mask), plainDot(s.params, s.weights, email, 1));
  });
});
