import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bytesToHex } from '@noble/hashes/utils.js';
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
import { KEY_INFO, SEED } from './rfc9497-vectors.js';

await oprfReady();

// The RFC 9497 vectors themselves are checked in oprf.test.ts.
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
