import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import {
  applyDelta,
  encodeDelta,
  encodeList,
  ENTRY_BYTES,
  evaluate,
  lookup,
  makeEntry,
  oprf,
  oprfReady,
  openList,
  type BlockRecord,
} from '../blocklist.js';

await oprfReady();

// RFC 9497 Appendix A.1.1, OPRF(ristretto255, SHA-512), base mode.
const SEED = hexToBytes('a3'.repeat(32));
const KEY_INFO = hexToBytes('74657374206b6579'); // "test key"
const SK = '5ebcea5ee37023ccb9fc2d2019f9d7737be85591ae8652ffa9ef0f4d37063b0e';
const BLIND = hexToBytes('64d37aed22a27f5191de1c1d69fadb899d8862b58eb4220029e036ec4c1f6706');
const VECTORS = [
  {
    input: '00',
    blinded: '609a0ae68c15a3cf6903766461307e5c8bb2f95e7e6550e1ffa2dc99e412803c',
    evaluated: '7ec6578ae5120958eb2db1745758ff379e77cb64fe77b0b2d8cc917ea0869c7e',
    output:
      '527759c3d9366f277d8c6020418d96bb393ba2afb20ff90df23fb7708264e2f3ab9135e3bd69955851de4b1f9fe8a0973396719b7912ba9ee8aa7d0b5e24bcf6',
  },
  {
    input: '5a'.repeat(17),
    blinded: 'da27ef466870f5f15296299850aa088629945a17d1f5b7f5ff043f76b3c06418',
    evaluated: 'b4cbf5a4f1eeda5a63ce7b77c7d23f461db3fcab0dd28e4e17cecb5c90d02c25',
    output:
      'f4a74c9c592497375e796aa837e907b1a045d34306a749db9f34221f7e750cb4f2a6413a6bf6fa5e19ba6348eb673934a722a7ede2e7621306d18951e7cf2c73',
  },
];

test('the OPRF is RFC 9497 ristretto255-SHA512: key derivation, evaluation, finalize and Evaluate match the vectors', () => {
  const sk = oprf.deriveKeyPair(SEED, KEY_INFO).secretKey;
  assert.equal(bytesToHex(sk), SK);
  for (const v of VECTORS) {
    const input = hexToBytes(v.input);
    assert.equal(bytesToHex(oprf.blindEvaluate(sk, hexToBytes(v.blinded))), v.evaluated);
    assert.equal(bytesToHex(oprf.finalize(input, BLIND, hexToBytes(v.evaluated))), v.output);
    assert.equal(bytesToHex(evaluate(sk, input)), v.output);
    // A fresh random blind leads to the same output, and its blinded element is not the vector's.
    const b = oprf.blind(input);
    assert.notEqual(bytesToHex(b.blinded), v.blinded);
    assert.equal(bytesToHex(oprf.finalize(input, b.blind, oprf.blindEvaluate(sk, b.blinded))), v.output);
  }
});

const KEY = oprf.deriveKeyPair(SEED, KEY_INFO).secretKey;
const enc = new TextEncoder();
const out = (item: string): Uint8Array => evaluate(KEY, enc.encode(item));
const rec = (category: number, score: number, sinceDay: number): BlockRecord => ({ category, score, sinceDay });
const list = (version: number, items: [string, BlockRecord][]): Uint8Array =>
  encodeList(
    { listId: 'phish', version, categories: ['malware', 'phishing'], createdAt: '2026-11-23T00:00:00Z' },
    items.map(([i, r]) => makeEntry(out(i), r)),
  );

test('a listed item is found by its OPRF output and its record decrypts; others are not found', () => {
  const l = openList(
    list(1, [
      ['domain:evil.example', rec(1, 90, 20000)],
      ['host:bad.example', rec(0, 55, 19000)],
    ]),
  );
  assert.equal(l.body.length, 2 * ENTRY_BYTES);
  assert.deepEqual(lookup(l, out('domain:evil.example')), rec(1, 90, 20000));
  assert.deepEqual(lookup(l, out('host:bad.example')), rec(0, 55, 19000));
  assert.equal(lookup(l, out('domain:good.example')), undefined);
  // The record is not in the clear: the entry bytes do not hold category 1, score 90 side by side.
  assert.ok(!bytesToHex(l.body).includes('015a'));
});

test('a tampered or truncated list package is refused', () => {
  const data = list(1, [
    ['domain:a.example', rec(0, 1, 1)],
    ['domain:b.example', rec(0, 2, 2)],
  ]);
  const flipped = data.slice();
  flipped[flipped.length - 1] ^= 1;
  assert.throws(() => openList(flipped), /SHA-256 mismatch/);
  assert.throws(() => openList(data.subarray(0, data.length - 1)), /body is 23 bytes/);
  assert.throws(() => openList(data.subarray(0, 30)), /truncated/);
  const magic = data.slice();
  magic[3] ^= 1;
  assert.throws(() => openList(magic), /bad magic/);
});

test('a delta rebuilds the next version byte for byte, and only from the version it starts at', () => {
  const v1 = list(1, [
    ['domain:a.example', rec(0, 10, 100)],
    ['domain:b.example', rec(1, 20, 200)],
    ['domain:c.example', rec(1, 30, 300)],
  ]);
  const v2 = list(2, [
    ['domain:a.example', rec(0, 10, 100)], // kept
    ['domain:c.example', rec(1, 99, 300)], // changed record
    ['domain:d.example', rec(1, 40, 400)], // added
  ]);
  const delta = encodeDelta(openList(v1), openList(v2));
  assert.deepEqual(applyDelta(openList(v1), delta), v2);
  // 2 removed tags (b, old c) and 2 added entries (new c, d) after the header.
  const l2 = openList(applyDelta(openList(v1), delta));
  assert.deepEqual(lookup(l2, out('domain:c.example')), rec(1, 99, 300));
  assert.equal(lookup(l2, out('domain:b.example')), undefined);
  assert.throws(() => applyDelta(openList(v2), delta), /starts at version 1, not 2/);
  const tampered = delta.slice();
  tampered[tampered.length - 1] ^= 1;
  assert.throws(() => applyDelta(openList(v1), tampered), /SHA-256 mismatch/);
  // A header that is JSON but not an object (fuzzing reaches it only by luck).
  const nullHeader = Uint8Array.from([...delta.subarray(0, 8), 0, 0, 0, 4, ...new TextEncoder().encode('null')]);
  assert.throws(() => applyDelta(openList(v1), nullHeader), /header is not an object/);
});
