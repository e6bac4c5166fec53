// wasm/ts/ristretto.ts (libsodium) against @noble/curves as the reference:
// the same bytes for the same inputs, the same encodings accepted and refused.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { ristretto255 } from '@noble/curves/ed25519.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import {
  add,
  checkElement,
  fromUniform,
  invertScalar,
  mul,
  mulBase,
  randomScalar,
  reduceWide,
  ristrettoReady,
  scalarCheck,
  sub,
} from '../ts/ristretto.js';

await ristrettoReady();

const { Point } = ristretto255;
const Fn = Point.Fn;
const L = Fn.ORDER;
const le = (n: bigint): Uint8Array => Fn.toBytes(n);
const hex = bytesToHex;
const FIELD_P = (1n << 255n) - 19n;
const leBytes = (n: bigint): Uint8Array =>
  Uint8Array.from({ length: 32 }, (_, k) => Number((n >> BigInt(8 * k)) & 0xffn));

function nobleCheck(bytes: Uint8Array): 'ok' | 'invalid' | 'identity' {
  try {
    return Point.fromBytes(bytes).is0() ? 'identity' : 'ok';
  } catch {
    return 'invalid';
  }
}

test('element checks agree with noble on random, edge and non-canonical encodings', () => {
  const cases: Uint8Array[] = [new Uint8Array(32), new Uint8Array(32).fill(0xff)];
  for (let i = 0; i < 3000; i++) cases.push(new Uint8Array(randomBytes(32)));
  for (let i = 0; i < 200; i++) {
    const p = Point.BASE.multiply(Fn.fromBytes(randomScalar())).toBytes();
    cases.push(p);
    const odd = p.slice();
    odd[0] |= 1; // a "negative" field element: never a canonical encoding
    cases.push(odd);
    const high = p.slice();
    high[31] |= 0x80; // top bit set: above the field prime
    cases.push(high);
    // s + p, when it fits in 255 bits, names the same field element non-canonically.
    const s = BigInt('0x' + hex(p.slice().reverse())) + FIELD_P;
    if (s < 1n << 255n) cases.push(leBytes(s));
  }
  let ok = 0;
  for (const c of cases) {
    const want = nobleCheck(c);
    assert.equal(checkElement(c), want, hex(c));
    if (want === 'ok') ok++;
  }
  assert.ok(ok > 300, `only ${ok} valid elements among the cases`);
  assert.equal(checkElement(new Uint8Array(32)), 'identity');
  assert.equal(checkElement(new Uint8Array(31)), 'invalid');
  assert.equal(checkElement(new Uint8Array(33)), 'invalid');
});

test('mul, mulBase, add, sub and the one-way map give noble bytes on many random inputs', () => {
  for (let i = 0; i < 200; i++) {
    const s = randomScalar();
    const t = randomScalar();
    const ns = Fn.fromBytes(s);
    const nt = Fn.fromBytes(t);
    const P = mulBase(s);
    const nP = Point.BASE.multiply(ns);
    assert.equal(hex(P), hex(nP.toBytes()));
    const Q = mul(t, P);
    assert.equal(hex(Q), hex(nP.multiply(nt).toBytes()));
    assert.equal(hex(add(P, Q)), hex(nP.add(nP.multiply(nt)).toBytes()));
    assert.equal(hex(sub(P, Q)), hex(nP.subtract(nP.multiply(nt)).toBytes()));
    assert.equal(hex(invertScalar(s)), hex(le(Fn.inv(ns))));
    const wide = new Uint8Array(randomBytes(64));
    assert.equal(hex(reduceWide(wide)), hex(le(BigInt('0x' + hex(wide.slice().reverse())) % L)));
  }
  // P − P and P + (−P) are the identity: 32 zero bytes, as noble encodes it.
  const P = mulBase(randomScalar());
  assert.equal(hex(sub(P, P)), '00'.repeat(32));
});

test('the one-way map (RFC 9496 §4.3.4) matches noble', async () => {
  const { ristretto255_hasher } = await import('@noble/curves/ed25519.js');
  const { expand_message_xmd } = await import('@noble/curves/abstract/hash-to-curve.js');
  const { sha512 } = await import('@noble/hashes/sha2.js');
  const DST = new TextEncoder().encode('test-dst');
  for (let i = 0; i < 100; i++) {
    const msg = new Uint8Array(randomBytes(i));
    const wide = expand_message_xmd(msg, DST, 64, sha512);
    assert.equal(hex(fromUniform(wide)), hex(ristretto255_hasher.hashToCurve(msg, { DST }).toBytes()));
  }
});

test('the identity, invalid elements and zero scalars are refused', () => {
  const P = mulBase(randomScalar());
  const s = randomScalar();
  // libsodium's validity check accepts the identity; checkElement reports it.
  assert.equal(checkElement(new Uint8Array(32)), 'identity');
  // crypto_scalarmult_ristretto255 throws when the product is the identity (identity input or zero scalar).
  assert.throws(() => mul(s, new Uint8Array(32)), /identity/);
  assert.throws(() => mul(new Uint8Array(32), P), /identity/);
  assert.throws(() => mul(leBytes(L), P), /identity/); // L ≡ 0
  const bad = P.slice();
  bad[0] |= 1;
  assert.throws(() => mul(s, bad), /invalid/);
  assert.throws(() => mulBase(new Uint8Array(32)), /zero/);
  assert.throws(() => invertScalar(new Uint8Array(32)));
});

test('scalarCheck refuses zero and anything not below the group order', () => {
  assert.equal(scalarCheck(randomScalar()), 'ok');
  assert.equal(scalarCheck(le(1n)), 'ok');
  assert.equal(scalarCheck(le(L - 1n)), 'ok');
  assert.equal(scalarCheck(new Uint8Array(32)), 'zero');
  assert.equal(scalarCheck(leBytes(L)), 'noncanonical');
  assert.equal(scalarCheck(leBytes(L + 1n)), 'noncanonical');
  assert.equal(scalarCheck(new Uint8Array(32).fill(0xff)), 'noncanonical');
  assert.equal(scalarCheck(new Uint8Array(31)), 'noncanonical');
});

test('random scalars are reduced, non-zero and distinct', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 500; i++) {
    const s = randomScalar();
    assert.equal(scalarCheck(s), 'ok');
    seen.add(hex(s));
  }
  assert.equal(seen.size, 500);
});
