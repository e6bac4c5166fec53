// protocol/oprf.ts (libsodium) against the RFC 9497 test vectors (every value
// of the OPRF mode's, rfc9497-vectors.ts), @noble/curves' ristretto255_oprf as
// the reference on many random inputs, and every input it must refuse.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { ristretto255, ristretto255_oprf } from '@noble/curves/ed25519.js';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { bytesToNumberLE } from '@noble/curves/utils.js';
import { additive, blindWith, evaluate, oprf, OprfElementError, oprfReady } from '../oprf.js';
import { mulBase } from '../../wasm/ts/ristretto.js';
import * as RFC from './rfc9497-vectors.js';

await oprfReady();

const noble = ristretto255_oprf.oprf;
const nobleEvaluate = (noble as unknown as { evaluate(k: Uint8Array, x: Uint8Array): Uint8Array }).evaluate;
const hex = bytesToHex;
const L = ristretto255.Point.Fn.ORDER;
const leBytes = (n: bigint): Uint8Array =>
  Uint8Array.from({ length: 32 }, (_, k) => Number((n >> BigInt(8 * k)) & 0xffn));

const SK = hexToBytes(RFC.SK);

test('RFC 9497 A.1.1 vectors: key, BlindedElement, EvaluationElement (one and all at once) and Output', () => {
  assert.equal(hex(oprf.deriveKeyPair(RFC.SEED, RFC.KEY_INFO).secretKey), RFC.SK);
  for (const v of RFC.VECTORS) {
    const input = hexToBytes(v.input);
    assert.equal(hex(blindWith(input, RFC.BLIND)), v.blindedElement);
    assert.equal(hex(oprf.blindEvaluate(SK, hexToBytes(v.blindedElement))), v.evaluationElement);
    assert.equal(hex(oprf.finalize(input, RFC.BLIND, hexToBytes(v.evaluationElement))), v.output);
    assert.equal(hex(evaluate(SK, input)), v.output);
    // The blocklist client's additive blinding, with a fresh blind, reaches the RFC's Output.
    const pair = additive.pair(mulBase(SK));
    assert.equal(hex(additive.finalize(input, pair, oprf.blindEvaluate(SK, additive.blind(input, pair)))), v.output);
  }
  // The provider evaluates a request's elements in one call (natively, when
  // provider-server/test/native-sodium.test.ts runs this file).
  const all = oprf.blindEvaluateAll(SK, hexToBytes(RFC.VECTORS.map((v) => v.blindedElement).join('')));
  assert.equal(hex(all), RFC.VECTORS.map((v) => v.evaluationElement).join(''));
});

test('every step gives the bytes of the noble reference on random keys, inputs and blinds', () => {
  for (let i = 0; i < 100; i++) {
    const key = i % 2 ? oprf.generateKeyPair().secretKey : noble.generateKeyPair().secretKey;
    const input = new Uint8Array(randomBytes(i % 40));
    const ours = oprf.blind(input);
    const theirs = noble.blind(input);
    // Blinded elements cross over: each side evaluates and finalizes the other's.
    assert.equal(hex(oprf.blindEvaluate(key, theirs.blinded)), hex(noble.blindEvaluate(key, theirs.blinded)));
    const evaluated = noble.blindEvaluate(key, ours.blinded);
    assert.equal(hex(oprf.blindEvaluate(key, ours.blinded)), hex(evaluated));
    const out = nobleEvaluate(key, input);
    assert.equal(hex(oprf.finalize(input, ours.blind, evaluated)), hex(out));
    assert.equal(hex(noble.finalize(input, ours.blind, evaluated)), hex(out));
    assert.equal(hex(oprf.finalize(input, theirs.blind, noble.blindEvaluate(key, theirs.blinded))), hex(out));
    assert.equal(hex(evaluate(key, input)), hex(out));
    const seed = new Uint8Array(randomBytes(32));
    const info = new Uint8Array(randomBytes(i % 9));
    assert.deepEqual(oprf.deriveKeyPair(seed, info), noble.deriveKeyPair(seed, info));
  }
});

test('keys and blinds that are zero or not below the group order are refused, naming no value', () => {
  const input = new TextEncoder().encode('host:evil.example');
  const { blinded } = oprf.blind(input);
  const key = oprf.generateKeyPair().secretKey;
  const evaluated = oprf.blindEvaluate(key, blinded);
  for (const [bad, why] of [
    [new Uint8Array(32), /key is zero/],
    [leBytes(L), /key is not a canonical/],
    [new Uint8Array(32).fill(0xff), /key is not a canonical/],
    [new Uint8Array(31), /key is not a canonical/],
  ] as const) {
    assert.throws(() => oprf.blindEvaluate(bad, blinded), why);
    assert.throws(() => evaluate(bad, input), why);
  }
  assert.throws(() => oprf.finalize(input, new Uint8Array(32), evaluated), /blind is zero/);
  assert.throws(() => oprf.finalize(input, leBytes(L + 5n), evaluated), /blind is not a canonical/);
  assert.throws(() => oprf.blind(new Uint8Array(65536)), /at most 65535 bytes/);
});

test('non-canonical, negative, off-curve and identity elements are refused on both sides', () => {
  const key = oprf.generateKeyPair().secretKey;
  const input = new Uint8Array([1, 2, 3]);
  const { blinded, blind } = oprf.blind(input);
  const odd = blinded.slice();
  odd[0] |= 1;
  const high = blinded.slice();
  high[31] |= 0x80;
  const cases: [Uint8Array, RegExp][] = [
    [new Uint8Array(32), /point at infinity/],
    [new Uint8Array(32).fill(0xff), /invalid ristretto255 encoding/],
    [odd, /invalid ristretto255 encoding/],
    [high, /invalid ristretto255 encoding/],
    [new Uint8Array(31), /invalid ristretto255 encoding/],
  ];
  // An off-curve encoding: canonical and non-negative, but no point (found by trying).
  for (let i = 0; ; i++) {
    const c = new Uint8Array(randomBytes(32));
    c[0] &= 0xfe;
    c[31] &= 0x7f;
    try {
      ristretto255.Point.fromBytes(c);
    } catch {
      cases.push([c, /invalid ristretto255 encoding/]);
      break;
    }
    assert.ok(i < 100);
  }
  for (const [bad, why] of cases) {
    assert.throws(() => oprf.blindEvaluate(key, bad), why);
    assert.throws(() => oprf.finalize(input, blind, bad), why);
    // The reference refuses the same elements.
    assert.throws(() => noble.blindEvaluate(key, bad));
  }
});

test('additive blinding gives the RFC output (noble) under the list key, and blindEvaluateAll the per-item elements', () => {
  const { secretKey: key, publicKey } = oprf.generateKeyPair();
  assert.equal(hex(publicKey), hex(ristretto255.Point.BASE.multiply(bytesToNumberLE(key)).toBytes()));
  for (const n of [1, 2, 7, 32]) {
    const inputs = Array.from({ length: n }, (_, i) => new Uint8Array(randomBytes(i + 3)));
    const pairs = inputs.map(() => additive.pair(publicKey));
    for (const p of pairs) {
      // r·G and r·K recomputed by noble from the blind.
      const r = bytesToNumberLE(p.blind);
      assert.equal(hex(p.toAdd), hex(ristretto255.Point.BASE.multiply(r).toBytes()));
      assert.equal(hex(p.toRemove), hex(ristretto255.Point.fromBytes(publicKey).multiply(r).toBytes()));
    }
    const blinded = new Uint8Array(32 * n);
    inputs.forEach((x, i) => blinded.set(additive.blind(x, pairs[i]), 32 * i));
    const all = oprf.blindEvaluateAll(key, blinded);
    const evaluated = inputs.map((_, i) => all.subarray(32 * i, 32 * i + 32));
    evaluated.forEach((e, i) =>
      assert.equal(hex(e), hex(noble.blindEvaluate(key, blinded.subarray(32 * i, 32 * i + 32)))),
    );
    inputs.forEach((x, i) =>
      assert.equal(hex(additive.finalize(x, pairs[i], evaluated[i], i)), hex(nobleEvaluate(key, x))),
    );
    // Under another key than the list's (a provider answering with the wrong key), every output is wrong.
    const other = oprf.generateKeyPair().secretKey;
    inputs.forEach((x, i) => {
      const wrong = oprf.blindEvaluate(other, blinded.subarray(32 * i, 32 * i + 32));
      assert.notEqual(hex(additive.finalize(x, pairs[i], wrong, i)), hex(nobleEvaluate(other, x)));
      assert.notEqual(hex(additive.finalize(x, pairs[i], wrong, i)), hex(nobleEvaluate(key, x)));
    });
    // A refused element names its index.
    if (n > 2) {
      assert.throws(
        () => additive.finalize(inputs[2], pairs[2], new Uint8Array(32), 2),
        (e: unknown) => e instanceof OprfElementError && e.index === 2 && /point at infinity/.test(e.message),
      );
      const flipped = evaluated[2].slice();
      flipped[31] |= 0x80;
      assert.throws(
        () => additive.finalize(inputs[2], pairs[2], flipped, 2),
        (e: unknown) =>
          e instanceof OprfElementError && e.index === 2 && /invalid ristretto255 encoding/.test(e.message),
      );
      const badBlinded = blinded.slice();
      badBlinded[64] |= 1;
      assert.throws(
        () => oprf.blindEvaluateAll(key, badBlinded),
        (e: unknown) =>
          e instanceof OprfElementError && e.index === 2 && /invalid ristretto255 encoding/.test(e.message),
      );
    }
  }
});

test('a blinded element is a fresh uniform element: the same item blinds differently, and a kept blind blinds the same', () => {
  const { publicKey } = oprf.generateKeyPair();
  const x = new TextEncoder().encode('host:evil.example');
  const a = additive.pair(publicKey);
  const b = additive.pair(publicKey);
  assert.notEqual(hex(additive.blind(x, a)), hex(additive.blind(x, b)));
  assert.equal(hex(additive.blind(x, additive.pair(publicKey, a.blind.slice()))), hex(additive.blind(x, a)));
});

test('a public key that is not a valid element other than the identity, and an unusable blind, are refused', () => {
  const { publicKey } = oprf.generateKeyPair();
  const flipped = publicKey.slice();
  flipped[31] |= 0x80;
  for (const bad of [new Uint8Array(32), flipped, publicKey.subarray(1), new Uint8Array(32).fill(0xff)])
    assert.throws(() => additive.checkPublicKey(bad), /public key is not a valid ristretto255 element/);
  additive.checkPublicKey(publicKey);
  assert.throws(() => additive.pair(publicKey, new Uint8Array(32)), /blind is zero/);
  assert.throws(() => additive.pair(publicKey, leBytes(L)), /blind is not a canonical/);
});
