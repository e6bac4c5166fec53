// docs/crypto.md#parameters: the frozen primes and NTT roots, checked with BigInt
// arithmetic independent of the C++ code.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadCore } from '../ts/core.js';
import {
  HE_N,
  HE_Q1,
  HE_Q2,
  HE_QKS,
  heLayout,
  keySwitchKeyBytes,
  ksGadget,
  makeParams,
  packedBytes,
  validateParams,
} from '../ts/he.js';
import { FLOOD_MARGIN_BITS, MAX_Q, MAX_T, maxFloodBits, Q_MINUS_T } from '../ts/limits.js';

function powMod(b: bigint, e: bigint, m: bigint): bigint {
  let r = 1n;
  for (b %= m; e > 0n; e >>= 1n, b = (b * b) % m) if (e & 1n) r = (r * b) % m;
  return r;
}

// Deterministic Miller–Rabin: the first 12 prime bases decide every n < 3.3·10^24.
function isPrime(n: bigint): boolean {
  const bases = [2n, 3n, 5n, 7n, 11n, 13n, 17n, 19n, 23n, 29n, 31n, 37n];
  if (bases.includes(n)) return true;
  if (bases.some((p) => n % p === 0n)) return false;
  let d = n - 1n;
  let s = 0;
  while (!(d & 1n)) {
    d >>= 1n;
    s++;
  }
  return bases.every((a) => {
    let x = powMod(a, d, n);
    if (x === 1n || x === n - 1n) return true;
    for (let i = 1; i < s; i++) if ((x = (x * x) % n) === n - 1n) return true;
    return false;
  });
}

const PSI = [17742327281753919n, 2591887741274009n, 1094367314627419n];

describe('he parameters (docs/crypto.md#parameters)', () => {
  it('q1, q2 are primes ≡ 1 mod 2^32 of 54 bits, the two largest of that form', () => {
    for (const q of [HE_Q1, HE_Q2]) {
      assert.ok(isPrime(q), `${q} prime`);
      assert.equal(q % 2n ** 32n, 1n);
      assert.equal(q.toString(2).length, 54);
    }
    // Nothing of the form k·2^32 + 1 between them or above q1 is prime.
    const primes: bigint[] = [];
    for (let k = 2n ** 22n - 1n; primes.length < 2; k--)
      if (isPrime(k * 2n ** 32n + 1n)) primes.push(k * 2n ** 32n + 1n);
    assert.deepEqual(primes, [HE_Q1, HE_Q2]);
    assert.ok(HE_Q1 * HE_Q2 < 2n ** 109n, 'log2 q ≤ 109 for 128-bit security at n = 4096');
  });

  it('q_ks is the largest prime ≡ 1 mod 2n below 2^50', () => {
    const step = BigInt(2 * HE_N);
    assert.ok(isPrime(HE_QKS));
    assert.equal(HE_QKS % step, 1n);
    assert.ok(HE_QKS < 2n ** 50n);
    for (let k = (2n ** 50n - 1n) / step; k * step + 1n > HE_QKS; k--) assert.ok(!isPrime(k * step + 1n));
    assert.equal(HE_QKS, 2n ** 50n - 2n ** 14n + 1n);
  });

  it('psi_i is the primitive 2n-th root of unity mod q1, q2, q_ks from the smallest generator (negacyclic NTT)', () => {
    [HE_Q1, HE_Q2, HE_QKS].forEach((q, i) => {
      assert.equal(powMod(PSI[i], BigInt(HE_N), q), q - 1n);
      assert.equal(powMod(PSI[i], BigInt(2 * HE_N), q), 1n);
      let g = 2n;
      while (powMod(powMod(g, (q - 1n) / BigInt(2 * HE_N), q), BigInt(HE_N), q) !== q - 1n) g++;
      assert.equal(powMod(g, (q - 1n) / BigInt(2 * HE_N), q), PSI[i]);
    });
  });

  it("the key switch's gadget: digits cover 2^(T+12), base 2^(36−T), and the switch's noise stays small at every T", () => {
    for (let T = 1; T <= MAX_T; T++) {
      const { inBits, baseBits, digits } = ksGadget(T);
      assert.equal(inBits, T + 12);
      assert.ok(baseBits * digits >= inBits && baseBits * (digits - 1) < inBits, `T = ${T}: ${digits} digits`);
      assert.ok(baseBits === inBits || baseBits === 36 - T);
      // docs/crypto.md#plaintext-and-output-modulus: variances in units of 2^Q at Q = T + 9, worst-case keys.
      const Q = T + Q_MINUS_T;
      const rounding = (HE_N / 12) * 2 ** (2 * (Q - inBits));
      const top = inBits - (digits - 1) * baseBits;
      const digitVar = (digits - 1) * (2 ** (2 * baseBits) / 12) + 2 ** (2 * top) / 12;
      const keySwitch = (2 ** (2 * Q) / Number(HE_QKS) ** 2) * HE_N * (21 / 2 + 1 / 4) * digitVar;
      assert.ok(rounding + keySwitch < 45, `T = ${T}: variance ${rounding + keySwitch}`);
      // Each term stays below one unit of 2^Q (Bernstein's bound needs |term| ≤ 1).
      assert.ok((2 ** (baseBits - 1) + 1) * 21 * 2 ** Q < Number(HE_QKS), `T = ${T}: a digit's term`);
      assert.equal(keySwitchKeyBytes(T), 35 + digits * 25_600);
    }
    assert.deepEqual(
      [12, 13, 20, 21, 24, 26, 29, 30, 32].map((T) => ksGadget(T).digits),
      [1, 2, 2, 3, 3, 4, 6, 7, 11],
    );
  });

  it('q ≡ 1 mod 2^T for every T ≤ 32, so Δ = (q−1)/2^T is exact', () => {
    const q = HE_Q1 * HE_Q2;
    for (let T = 1; T <= 32; T++) assert.equal((q - 1n) % 2n ** BigInt(T), 0n);
  });

  it('the C++ build uses the same constants', async () => {
    const core = await loadCore();
    const prime = core.fn('pmf_he_prime');
    for (const [i, q] of [HE_Q1, HE_Q2, HE_QKS].entries())
      assert.equal((BigInt(prime(i, 1) >>> 0) << 32n) | BigInt(prime(i, 0) >>> 0), q);
    for (let T = 1; T <= MAX_T; T++) {
      const g = ksGadget(T);
      assert.deepEqual(
        [0, 1, 2].map((what) => core.fn('pmf_he_ks_gadget')(T, what)),
        [g.inBits, g.baseBits, g.digits],
      );
      assert.equal(core.fn('pmf_he_ksk_bytes')(T), keySwitchKeyBytes(T));
    }
    assert.equal(core.fn('pmf_he_layout')(0), HE_N);
    assert.equal(core.fn('pmf_he_layout')(3), heLayout(makeParams({ N: 1, B: 1 })).recordBytes);
    for (let T = 8; T <= 32; T++) {
      assert.equal(core.fn('pmf_he_lwe_bytes')(T + Q_MINUS_T), heLayout(makeParams({ N: 1, B: 1, T })).lweBytes);
      for (const count of [1, 20, 64])
        assert.equal(
          core.fn('pmf_he_packed_bytes')(T + Q_MINUS_T, count),
          packedBytes(makeParams({ N: 1, B: 64, T }), count),
        );
      assert.equal(core.fn('pmf_he_max_flood_bits')(T), maxFloodBits(T));
    }
    assert.equal(core.fn('pmf_he_layout')(6), Q_MINUS_T);
    assert.equal(core.fn('pmf_he_layout')(7), FLOOD_MARGIN_BITS);
    assert.equal(core.fn('pmf_he_layout')(8), MAX_T);
    assert.equal(core.fn('pmf_he_layout')(9), MAX_Q);
  });

  it('layout helper: rows never straddle ciphertexts; sizes match docs/crypto.md', () => {
    const spam = heLayout(makeParams({ N: 5_000_000, B: 1, T: 24 }));
    assert.equal(spam.rowsPerCt, 4096);
    assert.equal(spam.ctCount, Math.ceil(5_000_001 / 4096));
    assert.equal(spam.recordBytes, 32 + (2 * 4096 * 54) / 8);
    assert.ok(spam.bodyBytes <= 70e6, `spam model ${spam.bodyBytes} bytes`);
    const Q = 24 + Q_MINUS_T;
    assert.equal(spam.lweBytes, 3 + Math.ceil((Q + 2048 * (Q - 1)) / 8)); // b' at Q bits, a' at Q − 1
    const topics = heLayout(makeParams({ N: 20_000, B: 2048 }));
    assert.equal(topics.rowsPerCt, 2);
    assert.equal(topics.ctCount, 10_001);
    assert.equal(heLayout(makeParams({ N: 10, B: 5 })).rowsPerCt, 819);
  });

  it('rejects parameters the layer cannot use, naming the field', () => {
    const ok = makeParams({ N: 10, B: 1 });
    assert.throws(() => validateParams({ ...ok, q1: '17' }), /q1, q2/);
    assert.throws(() => validateParams({ ...ok, T: 33 }), /T must be/);
    assert.throws(() => validateParams({ ...ok, Q: ok.T + 4 }), /Q must be/);
    assert.throws(() => validateParams({ ...ok, T: 32, b_in: 8, Q: 50 }), /Q must be/);
    assert.throws(() => validateParams({ ...ok, F: maxFloodBits(ok.T) + 1 }), /F must be/);
    assert.throws(() => validateParams({ ...ok, F: FLOOD_MARGIN_BITS }), /F must be/);
    assert.throws(() => validateParams({ ...ok, Q: ok.T + Q_MINUS_T - 1 }), /Q must be/);
    assert.throws(() => validateParams({ ...ok, f_in: 11 }), /f_in must be/);
    assert.throws(() => validateParams({ ...ok, B: 4097 }), /B must be/);
    assert.throws(() => validateParams({ ...ok, N: 0 }), /N must be/);
    assert.throws(() => validateParams({ ...ok, b_in: ok.T + 1 }), /b_in must be/);
  });
});
