// The provider's native libsodium binding (provider-server/native/) under
// the same tests as the WebAssembly build the clients use: with it installed,
// wasm/test/ristretto.test.ts checks every function against @noble/curves,
// protocol/test/oprf.test.ts the RFC 9497 test vectors and wasm/test/ot.test.ts
// the base-OT keys against a @noble/curves recomputation. Then the native
// base-OT loop byte for byte against the TypeScript one, the native OPRF
// evaluation (curve25519-dalek) against the RFC 9497 vectors and libsodium's
// multiplication, and the binding's own argument checks, which libsodium
// itself cannot make.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { oprf } from '../../protocol/oprf.js';
import * as RFC from '../../protocol/test/rfc9497-vectors.js';
import { receiveBaseHere } from '../../wasm/ts/ot.js';
import { randomBytes } from '../../wasm/ts/ot-wire.js';
import { mulBase, randomScalar } from '../../wasm/ts/ristretto.js';
import { loadProblem, providerSodiumReady } from '../src/native-sodium.js';
import { tempDir } from '../../scripts/test/temp-dir.js';

assert.equal(await providerSodiumReady(), true, 'the native binding is built (node scripts/build-native.mjs)');
await import('../../wasm/test/ristretto.test.js');
await import('../../protocol/test/oprf.test.js');
await import('../../wasm/test/ot.test.js');

const native = createRequire(import.meta.url)('../native/build/pmf_sodium.node') as Record<
  string,
  (...args: unknown[]) => unknown
>;

test('the binding refuses wrong lengths, non-byte arrays and wrong argument counts before libsodium sees them', () => {
  const s = new Uint8Array(32);
  s[0] = 1;
  const p = native.crypto_scalarmult_ristretto255_base(s) as Uint8Array;
  assert.throws(() => native.crypto_scalarmult_ristretto255(s, p.subarray(1)), RangeError);
  assert.throws(() => native.crypto_scalarmult_ristretto255(new Uint8Array(33), p), RangeError);
  assert.throws(() => native.crypto_core_ristretto255_from_hash(new Uint8Array(63)), RangeError);
  assert.throws(() => native.crypto_scalarmult_ristretto255(s, Array.from(p)), TypeError);
  assert.throws(() => native.crypto_scalarmult_ristretto255(s, new Uint16Array(16)), TypeError);
  assert.throws(() => native.crypto_scalarmult_ristretto255(s), TypeError);
  assert.equal(native.crypto_core_ristretto255_is_valid_point(p.subarray(1)), false);
  // Results are fresh arrays, not views of the inputs.
  const q = native.crypto_scalarmult_ristretto255(s, p) as Uint8Array;
  assert.deepEqual(q, p);
  assert.notEqual(q.buffer, p.buffer);
});

test('the native base-OT loop answers exactly as the TypeScript one, and refuses what it cannot use', () => {
  for (let run = 0; run < 8; run++) {
    const A = mulBase(randomScalar());
    const s = randomBytes(16);
    const wide = randomBytes(64 * 128);
    const out = native.pmf_ot_base_receive(A, s, wide) as Uint8Array;
    assert.equal(out.length, 128 * 64);
    assert.deepEqual(out, receiveBaseHere(A, s, wide));
  }
  const [A, s, wide] = [mulBase(randomScalar()), new Uint8Array(16), new Uint8Array(64 * 128)];
  assert.throws(() => native.pmf_ot_base_receive(A, s, wide.subarray(1)), RangeError);
  assert.throws(() => native.pmf_ot_base_receive(A, s.subarray(1), wide), RangeError);
  assert.throws(() => native.pmf_ot_base_receive(A, s), TypeError);
  const notPoint = A.slice();
  notPoint[31] |= 0x80; // the non-canonical twin that libsodium 1.0.18 alone would take
  assert.throws(() => native.pmf_ot_base_receive(notPoint, s, randomBytes(64 * 128)), /invalid point/);
  assert.throws(() => native.pmf_ot_base_receive(new Uint8Array(32), s, randomBytes(64 * 128)), /invalid point/);
});

test('the native OPRF evaluation gives the RFC 9497 EvaluationElements, one call for all, and so the Outputs', () => {
  const sk = hexToBytes(RFC.SK);
  const blinded = hexToBytes(RFC.VECTORS.map((v) => v.blindedElement).join(''));
  const evaluated = native.pmf_oprf_evaluate_all(sk, blinded) as Uint8Array;
  assert.equal(bytesToHex(evaluated), RFC.VECTORS.map((v) => v.evaluationElement).join(''));
  RFC.VECTORS.forEach((v, i) => {
    const element = evaluated.subarray(32 * i, 32 * i + 32);
    assert.equal(bytesToHex(oprf.finalize(hexToBytes(v.input), RFC.BLIND, element)), v.output);
  });
});

test("the native OPRF evaluation answers as libsodium's multiplication per element, and refuses what it would", () => {
  const mulEach = (k: Uint8Array, xs: Uint8Array) =>
    Uint8Array.from(
      Array.from({ length: xs.length / 32 }, (_, i) => [
        ...(native.crypto_scalarmult_ristretto255(k, xs.subarray(32 * i, 32 * i + 32)) as Uint8Array),
      ]).flat(),
    );
  for (const n of [1, 20, 64]) {
    const key = randomScalar();
    const blinded = Uint8Array.from(Array.from({ length: n }, () => [...mulBase(randomScalar())]).flat());
    assert.deepEqual(native.pmf_oprf_evaluate_all(key, blinded), mulEach(key, blinded), `${n} elements`);
  }
  const key = randomScalar();
  const good = mulBase(randomScalar());
  const twoOf = (x: Uint8Array) => Uint8Array.from([...good, ...x]);
  const topBit = good.slice();
  topBit[31] |= 0x80;
  const aboveP = new Uint8Array(32).fill(0xff);
  aboveP[31] = 0x7f;
  for (const bad of [topBit, aboveP, new Uint8Array(32)]) {
    assert.throws(() => native.pmf_oprf_evaluate_all(key, twoOf(bad)), /invalid point/);
    assert.throws(() => native.crypto_scalarmult_ristretto255(key, bad));
  }
  const aboveL = new Uint8Array(32).fill(0xff);
  aboveL[31] = 0x10; // 2^252 + 2^248 - 1 > L
  for (const badKey of [new Uint8Array(32), aboveL])
    assert.throws(() => native.pmf_oprf_evaluate_all(badKey, twoOf(good)), /invalid point or scalar/);
  assert.throws(() => native.pmf_oprf_evaluate_all(key, new Uint8Array(0)), RangeError);
  assert.throws(() => native.pmf_oprf_evaluate_all(key, new Uint8Array(33)), RangeError);
  assert.throws(() => native.pmf_oprf_evaluate_all(key.subarray(1), good), RangeError);
});

test("a binding that does not load is reported with the loader's reason, a missing one as not built", () => {
  const require = createRequire(import.meta.url);
  const notBuilt = (() => {
    try {
      require('../native/build/absent.node');
    } catch (e) {
      return e;
    }
  })();
  assert.equal(loadProblem(notBuilt), 'not built (node scripts/build-native.mjs)');
  const broken = path.join(tempDir('pmf-native-'), 'broken.node');
  fs.writeFileSync(broken, 'not a shared object');
  const failed = (() => {
    try {
      require(broken);
    } catch (e) {
      return e;
    }
  })();
  assert.match(loadProblem(failed), /^built but does not load: .*broken\.node/);
});
