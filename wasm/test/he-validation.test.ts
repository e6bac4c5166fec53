// Every byte string the lattice layer loads is validated (length, tag,
// version, ranges) and rejected with a clear Error that carries no secret.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HE_Q1, heLayout, loadHe, makeParams } from '../ts/he.js';
import { randomEmail, randomWeights, setup } from './he/fixtures.js';

/** Overwrites the 54-bit value at index i of a packed limb (little-endian bits). */
function poke54(buf: Uint8Array, offset: number, i: number, v: bigint): void {
  for (let b = 0; b < 54; b++) {
    const bit = i * 54 + b;
    const byte = offset + (bit >> 3);
    buf[byte] = (buf[byte] & ~(1 << (bit & 7))) | (Number((v >> BigInt(b)) & 1n) << (bit & 7));
  }
}

describe('he input validation', () => {
  it('secret key: wrong length, tag, version or a 2-bit code of 3', async () => {
    const he = await loadHe();
    const good = he.generateSecretKey();
    assert.equal(good.length, 1026);
    he.loadSecretKey(good).dispose();
    assert.throws(() => he.loadSecretKey(good.subarray(1)), /secret key: wrong length/);
    const tag = good.slice();
    tag[0] = 0x50;
    assert.throws(() => he.loadSecretKey(tag), /secret key: wrong length or type tag/);
    const ver = good.slice();
    ver[1] = 2;
    assert.throws(() => he.loadSecretKey(ver), /secret key: unsupported layout version/);
    const code = good.slice();
    code[500] |= 3;
    assert.throws(() => he.loadSecretKey(code), /secret key: a value is out of range/);
  });

  it('secret keys are ternary and balanced (each of −1, 0, 1 about n/3 times)', async () => {
    const he = await loadHe();
    const sk = he.generateSecretKey();
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 4096; i++) counts[(sk[2 + (i >> 2)] >> (2 * (i & 3))) & 3]++;
    assert.equal(counts[3], 0);
    for (const c of counts.slice(0, 3)) assert.ok(Math.abs(c - 4096 / 3) < 150, `counts ${counts}`);
    assert.notDeepEqual(sk, he.generateSecretKey());
  });

  it('public key: wrong size, tag or a coefficient ≥ q_i; seeds of the wrong size', async () => {
    const s = await setup({ N: 10, B: 1 });
    const seed = s.he.randomSeed();
    const nonce = s.he.randomSeed();
    const p0 = s.sk.publicKeyFor(seed, nonce);
    assert.equal(p0.length, 2 + 2 * 27648);
    s.he.loadPublicKey(p0, seed, nonce).dispose();
    assert.throws(() => s.he.loadPublicKey(p0.subarray(0, 100), seed, nonce), /public key: wrong length/);
    const big = p0.slice();
    poke54(big, 2, 17, HE_Q1);
    assert.throws(() => s.he.loadPublicKey(big, seed, nonce), /public key: a value is out of range/);
    assert.throws(() => s.he.loadPublicKey(p0, seed.subarray(1), nonce), /providerSeed must be 32 bytes/);
    assert.throws(() => s.sk.publicKeyFor(seed, new Uint8Array(31)), /clientNonce must be 32 bytes/);
  });

  it('model body: a coefficient ≥ q_i, extra bytes, or a short body are refused', async () => {
    const he = await loadHe();
    const sk = he.loadSecretKey(he.generateSecretKey());
    const p = makeParams({ N: 5000, B: 1 });
    const records = [...sk.forContext(p).encryptModel(randomWeights(p))];
    const { recordBytes, ctCount } = heLayout(p);
    assert.equal(records.length, ctCount);
    assert.ok(records.every((r) => r.length === recordBytes));

    const bad = records[1].slice();
    poke54(bad, 32 + 27648, 4095, 2n ** 54n - 1n);
    const m1 = he.newClientModel(p);
    m1.push(records[0]);
    assert.throws(() => m1.push(bad), /model body: ciphertext in 1\.\.1: a value is out of range/);
    assert.throws(() => m1.push(records[1]), /loading already failed/);

    const m2 = he.newClientModel(p);
    for (const r of records) m2.push(r);
    assert.throws(() => m2.push(records[0]), /longer than 2 ciphertexts/);

    const m3 = he.newClientModel(p);
    m3.push(records[0]);
    m3.push(records[1].subarray(0, 10));
    assert.throws(() => m3.finish(), /incomplete \(1 of 2/);
    assert.throws(() => m3.dot(randomEmail(5000, 3, 1)), /not ready/);
  });

  it('model weights: out of b_in range, too many or too few', async () => {
    const he = await loadHe();
    const sk = he.loadSecretKey(he.generateSecretKey());
    const p = makeParams({ N: 10, B: 2, b_in: 8 });
    const w = new Int32Array(22);
    w[5] = 128;
    const encryptor = sk.forContext(p);
    assert.throws(() => [...encryptor.encryptModel(w)], /value 5 is outside ±127/);
    assert.throws(() => [...encryptor.encryptModel(new Int32Array(21))], /got 21 values, expected/);
    assert.throws(() => [...encryptor.encryptModel(new Int32Array(23))], /more than/);
  });

  it('features: row 0 (the bias is implicit), rows > N, zero counts, mismatched lengths', async () => {
    const s = await setup({ N: 100, B: 1 });
    const f = (rows: number[], counts: number[]) => ({
      rows: Uint32Array.from(rows),
      counts: Uint32Array.from(counts),
    });
    assert.throws(() => s.model.dot(f([0], [1])), /feature row or count out of range/);
    assert.throws(() => s.model.dot(f([101], [1])), /feature row or count out of range/);
    assert.throws(() => s.model.dot(f([5], [0])), /feature row or count out of range/);
    assert.throws(() => s.model.dot(f([5, 6], [1])), /equal length/);
    assert.doesNotThrow(() => s.model.dot(f([100], [1_000_000])).dispose()); // capped at 2^f_in − 1
  });

  it('LWE ciphertext: wrong length, tag, version, Q, or non-zero padding bits', async () => {
    const s = await setup({ N: 100, B: 3 });
    const [x] = s.model.extract(s.model.dot(randomEmail(100, 5, 1)), [2], s.pk, s.ksk);
    assert.throws(
      () => s.model.extract(s.model.dot(randomEmail(100, 5, 1)), [3], s.pk, s.ksk),
      /index 3 is not in \[0, 3\)/,
    );
    s.decryptor.decryptLwe(x.lwe);
    assert.throws(() => s.decryptor.decryptLwe(x.lwe.subarray(1)), /LWE ciphertext: wrong length/);
    const ver = x.lwe.slice();
    ver[1] = 9;
    assert.throws(() => s.decryptor.decryptLwe(ver), /unsupported layout version/);
    assert.throws(() => s.user.forContext({ ...s.params, Q: 40 }).decryptLwe(x.lwe), /wrong length/);
    const q = x.lwe.slice();
    q[2] = 35;
    assert.throws(() => s.decryptor.decryptLwe(q), /invalid parameters/);
    const pad = x.lwe.slice();
    pad[pad.length - 1] |= 0x80; // 2049·36 bits end 4 bits into the last byte
    assert.throws(() => s.decryptor.decryptLwe(pad), /out of range/);
  });

  it("key-switching key: wrong tag, an older version, T out of range, wrong length, a value ≥ q_ks, another model's T", async () => {
    const s = await setup({ N: 100, B: 1, T: 24 });
    const seed = s.he.randomSeed();
    const id = { salt: s.he.randomSeed(), epoch: 1 };
    const good = s.sk.keySwitchKey(seed, s.user, id, 24);
    assert.equal(good.length, 35 + 3 * 25_600);
    s.he.loadKeySwitchKey(good).dispose();
    const edit = (at: number, v: number) => Object.assign(good.slice(), { [at]: v });
    assert.throws(() => s.he.loadKeySwitchKey(edit(0, 0x50)), /key-switching key: wrong length or type tag/);
    assert.throws(() => s.he.loadKeySwitchKey(edit(1, 2)), /key-switching key: unsupported layout version/);
    for (const T of [0, 33]) assert.throws(() => s.he.loadKeySwitchKey(edit(2, T)), /invalid parameters/);
    assert.throws(() => s.he.loadKeySwitchKey(edit(2, 26)), /wrong length/); // 4 digits at T = 26
    assert.throws(() => s.he.loadKeySwitchKey(good.subarray(0, good.length - 1)), /wrong length/);
    const big = good.slice();
    big.fill(0xff, 35 + 25_600 - 7, 35 + 25_600); // the first digit's last value: 2^50 − 1 ≥ q_ks
    assert.throws(() => s.he.loadKeySwitchKey(big), /key-switching key: a value is out of range/);
    assert.throws(() => s.sk.keySwitchKey(seed, s.user, id, 33), /T = 33 is not in \[1, 32\]/);
    const other = s.he.loadKeySwitchKey(s.sk.keySwitchKey(seed, s.user, id, 26));
    const acc = s.model.dot(randomEmail(100, 5, 1));
    assert.throws(() => s.model.extract(acc, [0], s.pk, other), /made for T = 26, the model has T = 24/);
    assert.throws(() => s.model.extractPacked(acc, 1, s.pk, other), /made for T = 26/);
    other.dispose();
  });

  it('an accumulator only extracts from the model that computed it', async () => {
    const a = await setup({ N: 100, B: 1 });
    const b = await setup({ N: 100_000, B: 1 });
    const acc = b.model.dot(randomEmail(100_000, 50, 1));
    assert.throws(() => a.model.extract(acc, [0], a.pk, a.ksk), /accumulator of another model/);
  });

  it('disposed objects refuse further use', async () => {
    const s = await setup({ N: 100, B: 1 });
    s.sk.dispose();
    assert.throws(() => s.sk.publicKeyFor(s.he.randomSeed(), s.he.randomSeed()), /after dispose/);
  });
});
