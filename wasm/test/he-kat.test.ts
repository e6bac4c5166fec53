// Known-answer tests of the lattice layer's byte formats and seed expansion
// (docs/crypto.md#tests), against independent TypeScript implementations: Node's OpenSSL
// ChaCha20, a BigInt bit-packer and BigInt ring arithmetic.
import assert from 'node:assert/strict';
import { createCipheriv, createHash, randomBytes, randomInt } from 'node:crypto';
import { describe, it } from 'node:test';
import { loadCore, type WasmCore } from '../ts/core.js';
import { check } from '../ts/status.js';
import {
  HE_LWE_N,
  HE_N,
  HE_Q1,
  HE_Q2,
  HE_QKS,
  heLayout,
  keySwitchKeyBytes,
  KSK_LAYOUT,
  ksGadget,
  LEGACY_MODEL_A_ROUNDS,
  MODEL_A_ROUNDS,
  loadHe,
  makeParams,
  publicKeySeed,
} from '../ts/he.js';
import { localSession } from './he/local-session.js';
import { chachaBlock, chachaKeystream } from './he/chacha-reference.js';
import { PINNED_EXPANSION, PINNED_EXPANSION_CHACHA8 } from './he/fixtures.js';
import { packLwe } from './he/lwe-layout.js';

const QS = [HE_Q1, HE_Q2, HE_QKS];
const BITS = [54, 54, 50];
const SEED = Uint8Array.from({ length: 32 }, (_, i) => i);
const SALT = Uint8Array.from({ length: 32 }, (_, i) => 255 - i); // an account's key salt

function keystream(key: Uint8Array, nonce: Uint8Array, len: number): Buffer {
  const iv = Buffer.concat([Buffer.alloc(4), nonce]); // 32-bit block counter 0, then the nonce
  return createCipheriv('chacha20', key, iv).update(Buffer.alloc(len));
}

/**
 * The documented XOF: ChaCha20 (OpenSSL) or, with rounds = 8, ChaCha8 (the
 * TypeScript reference) of (seed, "pmf-he-a" ‖ u8(limb) ‖ u24le(index)),
 * words masked to the modulus's bits, rejection.
 */
function referenceExpand(seed: Uint8Array, limb: number, index = 0, rounds = 20): bigint[] {
  const nonce = Buffer.concat([
    Buffer.from('pmf-he-a'),
    Buffer.from([limb, index & 0xff, (index >> 8) & 0xff, index >> 16]),
  ]);
  const ks =
    rounds === 20 ? keystream(seed, nonce, 8 * 4200) : Buffer.from(chachaKeystream(seed, nonce, 8 * 4200, rounds));
  const out: bigint[] = [];
  for (let o = 0; out.length < HE_N; o += 8) {
    const v = ks.readBigUInt64LE(o) & (2n ** BigInt(BITS[limb]) - 1n);
    if (v < QS[limb]) out.push(v);
  }
  return out;
}

/** The module's expansion of a from `seed` for `limb`, as bytes. */
function expandA(core: WasmCore, seed: Uint8Array, limb: number, rounds = 20): Uint8Array {
  return core.withBuffers([seed], (sp) => {
    const o = core.alloc(8 * HE_N);
    core.fn('pmf_he_expand_a')(sp, limb, o, rounds);
    const r = core.copyOut(o, 8 * HE_N);
    core.free(o);
    return r;
  });
}

/** Little-endian bit-unpacking of `count` values of `width` bits. */
function unpack(bytes: Uint8Array, count: number, width: number): bigint[] {
  const out: bigint[] = [];
  let acc = 0n;
  let have = 0;
  let at = 0;
  for (let i = 0; i < count; i++) {
    while (have < width) {
      acc |= BigInt(bytes[at++]) << BigInt(have);
      have += 8;
    }
    out.push(acc & ((1n << BigInt(width)) - 1n));
    acc >>= BigInt(width);
    have -= width;
  }
  return out;
}

/** Little-endian bit-packing of `width`-bit values (independent of pack.h). */
function pack(values: bigint[], width: number): Uint8Array {
  let acc = 0n;
  values.forEach((v, i) => (acc |= v << BigInt(i * width)));
  const out = new Uint8Array(Math.ceil((values.length * width) / 8));
  for (let i = 0; i < out.length; i++) out[i] = Number((acc >> BigInt(8 * i)) & 0xffn);
  return out;
}

/** Secret-key bytes for a given ternary s: 'S', version 1, 2-bit codes 0 → 0, 1 → 1, −1 → 2. */
function encodeSecretKey(s: number[]): Uint8Array {
  const out = new Uint8Array(2 + HE_N / 4);
  out[0] = 0x53;
  out[1] = 1;
  s.forEach((v, i) => (out[2 + (i >> 2)] |= (v === -1 ? 2 : v) << (2 * (i & 3))));
  return out;
}

const mod = (a: bigint, q: bigint): bigint => ((a % q) + q) % q;

describe('he known answers', () => {
  it('ChaCha20 matches RFC 8439 §2.3.2 and OpenSSL', async () => {
    const core = await loadCore();
    const key = SEED;
    const nonce = Uint8Array.from(Buffer.from('000000090000004a00000000', 'hex'));
    const out = core.withBuffers([key, nonce], (kp, np) => {
      const o = core.alloc(256);
      core.fn('pmf_prg_chacha20')(kp, np, o, 256);
      const r = core.copyOut(o, 256);
      core.free(o);
      return r;
    });
    // RFC 8439 §2.3.2: block counter 1 = bytes 64..127 of the stream.
    assert.equal(
      Buffer.from(out.subarray(64, 128)).toString('hex'),
      '10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e' +
        'd2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e',
    );
    assert.deepEqual(Buffer.from(out), keystream(key, nonce, 256));
  });

  it('the TypeScript ChaCha reference at 20 rounds matches RFC 8439 §2.3.2 and OpenSSL', () => {
    const key = SEED;
    const nonce = Uint8Array.from(Buffer.from('000000090000004a00000000', 'hex'));
    assert.equal(
      Buffer.from(chachaBlock(key, 1, nonce, 20)).toString('hex'),
      '10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e' +
        'd2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e',
    );
    assert.deepEqual(Buffer.from(chachaKeystream(key, nonce, 1000, 20)), keystream(key, nonce, 1000));
    assert.notDeepEqual(chachaBlock(key, 1, nonce, 8), chachaBlock(key, 1, nonce, 20));
  });

  it('ChaCha8 seed expansion (model records, package format 2) equals the reference XOF and the pinned digest', async () => {
    const core = await loadCore();
    for (const limb of [0, 1]) {
      const got = expandA(core, SEED, limb, 8);
      const ref = referenceExpand(SEED, limb, 0, 8);
      const view = new DataView(got.buffer);
      for (let i = 0; i < HE_N; i++)
        assert.equal(view.getBigUint64(8 * i, true), ref[i], `limb ${limb} coefficient ${i}`);
      const digest = createHash('sha256').update(got).digest('hex');
      assert.equal(digest, PINNED_EXPANSION_CHACHA8[limb], `limb ${limb} digest`);
    }
  });

  it('seed expansion of a equals the reference XOF and the pinned digest', async () => {
    const core = await loadCore();
    for (const limb of [0, 1, 2]) {
      const got = expandA(core, SEED, limb);
      const ref = referenceExpand(SEED, limb);
      const view = new DataView(got.buffer);
      for (let i = 0; i < HE_N; i++)
        assert.equal(view.getBigUint64(8 * i, true), ref[i], `limb ${limb} coefficient ${i}`);
      const digest = createHash('sha256').update(got).digest('hex');
      assert.equal(digest, PINNED_EXPANSION[limb], `limb ${limb} digest`);
    }
  });

  it('seed expansion continues the stream past rejected words (seeds that reject, limb q2)', async () => {
    const core = await loadCore();
    const limb = 1; // q2 = (2^22 − 64)·2^32 + 1: about one polynomial in 16 rejects a word
    const nonce = Buffer.concat([Buffer.from('pmf-he-a'), Buffer.from([limb, 0, 0, 0])]);
    const mask = 2n ** BigInt(BITS[limb]) - 1n;
    const rejects = (seed: Uint8Array): number => {
      const ks = keystream(seed, nonce, 8 * HE_N);
      let n = 0;
      for (let o = 0; o < ks.length; o += 8) n += (ks.readBigUInt64LE(o) & mask) >= QS[limb] ? 1 : 0;
      return n;
    };
    const seeds: Uint8Array[] = [];
    for (let i = 0; seeds.length < 2; i++) {
      const seed = new Uint8Array(createHash('sha256').update(`reject ${i}`).digest());
      if (rejects(seed) > 0) seeds.push(seed);
    }
    for (const seed of seeds) {
      const got = expandA(core, seed, limb);
      const view = new DataView(got.buffer);
      const ref = referenceExpand(seed, limb);
      for (let i = 0; i < HE_N; i++) assert.equal(view.getBigUint64(8 * i, true), ref[i], `coefficient ${i}`);
    }
  });

  it("key-switching key layout: 'K', version 3, T, a-seed, then per digit b_i = −a_i·s_u(X²) + e_i + g_i·s mod q_ks at 50 bits", async () => {
    const he = await loadHe();
    const T = 24;
    const { inBits, baseBits, digits } = ksGadget(T);
    // Known keys: s with a repeating pattern, s_u(X²) with another one at the even coefficients.
    const s = Array.from({ length: HE_N }, (_, i) => [1, 0, -1, -1, 1][i % 5]);
    const su = Array.from({ length: HE_LWE_N }, (_, i) => [1, -1, 0][i % 3]);
    const sk = he.loadSecretKey(encodeSecretKey(s));
    const user = he.loadSecretKey(encodeSecretKey(Array.from({ length: HE_N }, (_, i) => (i % 2 ? 0 : su[i / 2]))));
    const ksk = sk.keySwitchKey(SEED, user, { salt: SALT, epoch: 3 }, T);
    assert.equal(ksk.length, keySwitchKeyBytes(T));
    assert.deepEqual([...ksk.subarray(0, 3)], [0x4b, 3, T]);
    assert.equal(KSK_LAYOUT, ksk[1], 'KSK_LAYOUT names the layout the core writes');
    const aSeed = ksk.subarray(3, 35);
    for (let i = 0; i < digits; i++) {
      const a = referenceExpand(aSeed, 2, i + 1);
      const b = unpack(ksk.subarray(35 + i * 25_600), HE_N, 50);
      const g = (HE_QKS * 2n ** BigInt(baseBits * i) + 2n ** BigInt(inBits - 1)) / 2n ** BigInt(inBits); // round
      for (const k of [0, 1, 2047, 4095]) {
        let as = 0n; // coefficient k of a·s_u(X²), negacyclic
        for (let j = 0; j < HE_N; j += 2) as += (j <= k ? a[k - j] : -a[HE_N + k - j]) * BigInt(su[j / 2]);
        const e = mod(b[k] + as - g * BigInt(s[k]), HE_QKS);
        const centered = e > HE_QKS / 2n ? e - HE_QKS : e;
        assert.ok(centered >= -21n && centered <= 21n, `digit ${i}, coefficient ${k}: error ${centered}`);
      }
    }
    sk.dispose();
    user.dispose();
  });

  it('key switch at coefficient j equals BigInt ring arithmetic on the rounded, decomposed a-part', async () => {
    const he = await loadHe();
    const core = he.core;
    const sk = he.loadSecretKey(encodeSecretKey(Array.from({ length: HE_N }, (_, i) => [1, 0, -1, -1, 1][i % 5])));
    const user = he.loadSecretKey(
      encodeSecretKey(Array.from({ length: HE_N }, (_, i) => (i % 2 ? 0 : [1, -1, 0][i % 3]))),
    );
    // Uniform a mod q2, with the values at the rounding's edges first.
    const a = [0n, HE_Q2 - 1n, (HE_Q2 - 1n) / 2n, (HE_Q2 + 1n) / 2n];
    while (a.length < HE_N) {
      const v = randomBytes(8).readBigUInt64LE() & (2n ** 54n - 1n);
      if (v < HE_Q2) a.push(v);
    }
    const aBytes = new Uint8Array(8 * HE_N);
    a.forEach((v, i) => new DataView(aBytes.buffer).setBigUint64(8 * i, v, true));
    // T = 12: one digit of 24 bits (the widest); T = 31: nine digits of 5 bits.
    for (const T of [12, 31]) {
      const bytes = sk.keySwitchKey(SEED, user, { salt: SALT, epoch: 3 }, T);
      const ksk = he.loadKeySwitchKey(bytes);
      const { inBits, baseBits, digits } = ksGadget(T);
      const top = 2n ** BigInt(inBits);
      const d: bigint[][] = Array.from({ length: digits }, () => []);
      for (const ac of a) {
        let v = ((ac * top + HE_Q2 / 2n) / HE_Q2) % top; // round(a·2^in/q2) mod 2^in
        if (v >= top / 2n) v -= top;
        for (let i = 0; i < digits; i++) {
          const low = v & (2n ** BigInt(baseBits) - 1n);
          const digit = i + 1 === digits ? v : low >= 2n ** BigInt(baseBits - 1) ? low - 2n ** BigInt(baseBits) : low;
          d[i].push(digit);
          v = (v - digit) >> BigInt(baseBits);
        }
      }
      const bs = Array.from({ length: digits }, (_, i) => unpack(bytes.subarray(35 + i * 25_600), HE_N, 50));
      const as = Array.from({ length: digits }, (_, i) => referenceExpand(bytes.subarray(3, 35), 2, i + 1));
      // Coefficient k of Σ_i d_i·p_i in Z_q_ks[X]/(X^n + 1).
      const at = (p: bigint[][], k: number): bigint => {
        let sum = 0n;
        for (let i = 0; i < digits; i++)
          for (let c = 0; c < HE_N; c++) sum += d[i][c] * (c <= k ? p[i][k - c] : -p[i][HE_N + k - c]);
        return mod(sum, HE_QKS);
      };
      for (const j of [0, 1, 2047, 4095, randomInt(HE_N)]) {
        const [bj, ksA] = core.withBuffers([aBytes], (ap) => {
          const out = core.alloc(8 + 8 * HE_N);
          check(core.fn('pmf_he_key_switch_at')(ksk.live(), ap, j, out, out + 8), 'key switch');
          const r = core.copyOut(out, 8 + 8 * HE_N);
          core.free(out);
          return [new DataView(r.buffer).getBigUint64(0, true), new DataView(r.buffer, 8)];
        });
        assert.equal(bj, at(bs, j), `T = ${T}: b-part at ${j}`);
        // The a-part at j's parity only: value m is coefficient 2m + j mod 2.
        for (const m of [0, 1, 1024, 2047, randomInt(HE_N / 2)]) {
          const k = 2 * m + (j & 1);
          assert.equal(ksA.getBigUint64(8 * m, true), at(as, k), `T = ${T}, j = ${j}: a-part at ${k}`);
        }
      }
      ksk.dispose();
    }
    sk.dispose();
    user.dispose();
  });

  it('p1 seed = SHA-256("pmf-he-pk-v1" ‖ provider_seed ‖ client_nonce)', () => {
    const nonce = Uint8Array.from({ length: 32 }, (_, i) => 255 - i);
    const want = createHash('sha256').update('pmf-he-pk-v1').update(SEED).update(nonce).digest();
    assert.deepEqual(Buffer.from(publicKeySeed(SEED, nonce)), want);
  });

  it("LWE layout: tag, version 3, Q, then b' at Q bits and n' = 2048 a-values at Q − 1 bits, little-endian", async () => {
    const he = await loadHe();
    assert.equal(heLayout(makeParams({ N: 1, B: 1, T: 24 })).lweBytes, 8200); // Q = 33
    assert.equal(heLayout(makeParams({ N: 1, B: 1, T: 26 })).lweBytes, 8712); // Q = 35, the default spam model
    assert.equal(heLayout(makeParams({ N: 1, B: 1, T: 32 })).lweBytes, 10249); // Q = 41
    const p = makeParams({ N: 1, B: 1, T: 27 }); // Q = 36, the layout below
    // b = 1, a_0 = 2^35 − 1, rest 0: a fixed byte prefix.
    const lwe = packLwe(1n, [2n ** 35n - 1n, ...new Array(HE_LWE_N - 1).fill(0n)], 36);
    assert.equal(lwe.length, heLayout(p).lweBytes);
    assert.equal(Buffer.from(lwe.subarray(0, 13)).toString('hex'), '4c0324' + '01000000f0ffffff7f00');
    // A user key s_u(X²) with s_u = (1, −1, 0, 1, −1, 0, …): phase = b + Σ 2·a_k s_u[k]
    // mod 2^36, computed in BigInt. Odd coefficients of the ring key are zero.
    const su = Array.from({ length: HE_LWE_N }, (_, i) => [1, -1, 0][i % 3]);
    const sk = he.loadSecretKey(encodeSecretKey(Array.from({ length: HE_N }, (_, i) => (i % 2 ? 0 : su[i / 2]))));
    const a = Array.from({ length: HE_LWE_N }, (_, i) => (BigInt(i) * 0x9e3779b97f4a7c15n) & (2n ** 35n - 1n));
    const b = 123456789n;
    const lwe2 = packLwe(b, a, 36);
    const want = mod(b + a.reduce((acc, ak, k) => acc + 2n * ak * BigInt(su[k]), 0n), 2n ** 36n);
    assert.equal(sk.forContext(p).lwePhase(lwe2), want);
    sk.dispose();
  });

  it('model record layout: seed ‖ b limbs (54-bit packed); hand-built records of package formats 2 (ChaCha8) and 1 (ChaCha20) decrypt', async () => {
    const he = await loadHe();
    for (const aRounds of [MODEL_A_ROUNDS, LEGACY_MODEL_A_ROUNDS]) {
      const p = makeParams({ N: 3, B: 1, T: 24 });
      // s = 1 (constant polynomial), so a·s = a and b = −a + Δ·m mod q_i (no noise).
      const s = [1, ...new Array(HE_N - 1).fill(0)];
      const sk = he.loadSecretKey(encodeSecretKey(s));
      const m = [5n, 2n ** 24n - 7n, 1000n, 77n]; // bias and rows 1..3
      const delta = (HE_Q1 * HE_Q2 - 1n) / 2n ** 24n;
      const limbs = QS.map((q, l) => {
        const a = referenceExpand(SEED, l, 0, aRounds);
        return pack(
          a.map((ai, i) => mod(-ai + delta * (m[i] ?? 0n), q)),
          54,
        );
      });
      const record = new Uint8Array([...SEED, ...limbs[0], ...limbs[1]]);
      assert.equal(record.length, heLayout(p).recordBytes);
      const model = he.newClientModel(p, { aRounds });
      model.push(record.subarray(0, 1000)); // chunk boundaries anywhere
      model.push(record.subarray(1000));
      model.finish();
      const session = localSession(he, sk, he.randomSeed(), p.T);
      const acc = model.dot({ rows: new Uint32Array([1, 3]), counts: new Uint32Array([2, 1]) });
      const [x] = model.extract(acc, [0], session.pk, session.ksk);
      const y = session.user.forContext(p).decryptLwe(x.lwe);
      assert.equal(BigInt.asUintN(24, BigInt(y - x.mask)), (5n + 2n * (2n ** 24n - 7n) + 77n) % 2n ** 24n);
      for (const h of [acc, session, model, sk]) h.dispose();
    }
  });
});
