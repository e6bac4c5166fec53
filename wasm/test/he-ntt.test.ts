// The negacyclic NTT at the production moduli (q1, q2, q_ks) against BigInt
// arithmetic: the forward transform evaluated from its definition, the lazy
// forward's outputs congruent and in range, ring products against schoolbook
// negacyclic convolution, inverse round trips and the inverse's halves.
import assert from 'node:assert/strict';
import { randomBytes, randomInt } from 'node:crypto';
import { describe, it } from 'node:test';
import { check } from '../ts/status.js';
import { HE_N, HE_Q1, HE_Q2, HE_QKS, loadHe } from '../ts/he.js';

const MODULI = [HE_Q1, HE_Q2, HE_QKS];
const PSI = [17742327281753919n, 2591887741274009n, 1094367314627419n]; // he-params.test.ts checks them
const LOG_N = Math.log2(HE_N);
const FORWARD = 0;
const FORWARD_LAZY = 1;
const INVERSE = 2;
const INVERSE_HALF = 3; // + parity

const mod = (x: bigint, q: bigint): bigint => ((x % q) + q) % q;

function powMod(b: bigint, e: bigint, q: bigint): bigint {
  let r = 1n;
  for (b %= q; e > 0n; e >>= 1n, b = (b * b) % q) if (e & 1n) r = (r * b) % q;
  return r;
}

const bitReverse = (k: number): number => {
  let r = 0;
  for (let i = 0; i < LOG_N; i++, k >>= 1) r = (r << 1) | (k & 1);
  return r;
};

/** Uniform values below q, the edges first: 0, 1, q − 1, q − 2, (q ± 1)/2. */
function randomPoly(q: bigint, edges = true): bigint[] {
  const out = edges ? [0n, 1n, q - 1n, q - 2n, (q - 1n) / 2n, (q + 1n) / 2n] : [];
  const bits = BigInt(q.toString(2).length);
  while (out.length < HE_N) {
    const v = randomBytes(8).readBigUInt64LE() & (2n ** bits - 1n);
    if (v < q) out.push(v);
  }
  return out;
}

/** Output k of the forward transform: a evaluated at psi^(2·bitrev(k) + 1). */
function evaluate(a: bigint[], k: number, limb: number): bigint {
  const q = MODULI[limb];
  const x = powMod(PSI[limb], BigInt(2 * bitReverse(k) + 1), q);
  let sum = 0n;
  for (let i = HE_N - 1; i >= 0; i--) sum = (sum * x + a[i]) % q; // Horner
  return sum;
}

/** Coefficient k of a·b in Z_q[X]/(X^n + 1). */
function productAt(a: bigint[], b: bigint[], k: number, q: bigint): bigint {
  let sum = 0n;
  for (let c = 0; c < HE_N; c++) sum += a[c] * (c <= k ? b[k - c] : -b[HE_N + k - c]);
  return mod(sum, q);
}

const SAMPLES = (): number[] => [
  0,
  1,
  2,
  3,
  HE_N / 2 - 1,
  HE_N / 2,
  HE_N - 2,
  HE_N - 1,
  randomInt(HE_N),
  randomInt(HE_N),
];

describe('he NTT', async () => {
  const he = await loadHe();
  const core = he.core;
  /** One transform by the module (pmf_he_ntt), on values below the modulus. */
  const transform = (limb: number, op: number, a: bigint[]): bigint[] => {
    const bytes = new Uint8Array(8 * HE_N);
    const view = new DataView(bytes.buffer);
    a.forEach((v, i) => view.setBigUint64(8 * i, v, true));
    const out = core.withBuffers([bytes], (p) => {
      check(core.fn('pmf_he_ntt')(limb, op, p), 'ntt');
      return new DataView(core.copyOut(p, 8 * HE_N).buffer);
    });
    return Array.from({ length: HE_N }, (_, i) => out.getBigUint64(8 * i, true));
  };

  for (const [limb, name] of ['q1', 'q2', 'q_ks'].entries()) {
    const q = MODULI[limb];

    it(`${name}: forward equals evaluation at the odd powers of psi (bit-reversed order); lazy outputs congruent and below 2^60`, () => {
      for (const a of [randomPoly(q), new Array<bigint>(HE_N).fill(q - 1n)]) {
        const exact = transform(limb, FORWARD, a);
        const lazy = transform(limb, FORWARD_LAZY, a);
        for (let k = 0; k < HE_N; k++) {
          assert.ok(exact[k] < q, `reduced output ${k}`);
          assert.ok(lazy[k] < 2n ** 60n, `lazy output ${k} below 2^60`);
          assert.equal(lazy[k] % q, exact[k], `lazy output ${k} congruent`);
        }
        for (const k of SAMPLES()) assert.equal(exact[k], evaluate(a, k, limb), `output ${k}`);
      }
    });

    it(`${name}: inverse(forward(a) ⊙ forward(b)) is the negacyclic product; inverse undoes forward both ways`, () => {
      const a = randomPoly(q);
      const b = randomPoly(q, false);
      const fa = transform(limb, FORWARD_LAZY, a);
      const fb = transform(limb, FORWARD, b);
      const c = transform(
        limb,
        INVERSE,
        fa.map((v, i) => (v * fb[i]) % q),
      );
      for (const k of SAMPLES()) assert.equal(c[k], productAt(a, b, k, q), `coefficient ${k}`);
      assert.deepEqual(transform(limb, INVERSE, transform(limb, FORWARD, a)), a);
      const top = new Array<bigint>(HE_N).fill(q - 1n);
      assert.deepEqual(transform(limb, FORWARD, transform(limb, INVERSE, top)), top);
    });

    it(`${name}: each inverse half is one parity of the whole inverse`, () => {
      for (const a of [randomPoly(q), new Array<bigint>(HE_N).fill(q - 1n)]) {
        const whole = transform(limb, INVERSE, a);
        for (const parity of [0, 1]) {
          const half = transform(limb, INVERSE_HALF + parity, a).slice(0, HE_N / 2);
          assert.deepEqual(
            half,
            whole.filter((_, i) => i % 2 === parity),
            `parity ${parity}`,
          );
        }
      }
    });
  }

  it('refuses a value not below the modulus and an unknown modulus or operation', () => {
    const a = new Array<bigint>(HE_N).fill(0n);
    a[7] = HE_QKS;
    assert.throws(() => transform(2, FORWARD, a), /ntt/);
    assert.throws(() => transform(3, FORWARD, a.fill(0n)), /ntt/);
    assert.throws(() => transform(0, 5, a), /ntt/);
  });
});
