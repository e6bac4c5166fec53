import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  encodePackagePrefix,
  LEGACY_PACKAGE_FORMAT,
  openPackage,
  PACKAGE_FORMAT,
  parsePackagePrefix,
  type PackageHeader,
} from '../package.js';
import { samplePackageHeader as sample } from './sample-package.js';

const join = (a: Uint8Array, b: Uint8Array): Uint8Array => {
  const out = new Uint8Array(a.length + b.length);
  out.set(a);
  out.set(b, a.length);
  return out;
};

test('a package round-trips and its body hash is checked', () => {
  const body = new Uint8Array(1000).map((_, i) => i * 7);
  const pkg = join(encodePackagePrefix(sample(body)), body);
  const opened = openPackage(pkg);
  assert.deepEqual(opened.body, body);
  assert.equal(opened.header.providerSeed, 'ab'.repeat(32));
  const tampered = pkg.slice();
  tampered[tampered.length - 1] ^= 1;
  assert.throws(() => openPackage(tampered), /SHA-256 mismatch/);
  assert.throws(() => openPackage(pkg.subarray(0, pkg.length - 1)), /body is 999 bytes/);
});

test('prefix parsing waits for more bytes, then validates every header field', () => {
  const body = new Uint8Array(10);
  const prefix = encodePackagePrefix(sample(body));
  assert.equal(parsePackagePrefix(prefix.subarray(0, 20)), undefined);
  assert.equal(parsePackagePrefix(prefix)?.bodyOffset, prefix.length);
  const bad = prefix.slice();
  bad[0] = 0;
  assert.throws(() => parsePackagePrefix(bad), /bad magic/);
  assert.throws(() => encodePackagePrefix({ ...sample(body), providerSeed: 'zz' }), /providerSeed/);
  assert.throws(() => encodePackagePrefix({ ...sample(body), params: { ...sample(body).params, T: 40 } }), /params.T/);
  assert.throws(() => encodePackagePrefix({ ...sample(body), modelId: '../x' }), /modelId/);
  // Format 2 (ChaCha8 expansion) and the older format 1 (ChaCha20) are read; nothing else.
  for (const format of [PACKAGE_FORMAT, LEGACY_PACKAGE_FORMAT] as const)
    assert.equal(parsePackagePrefix(encodePackagePrefix({ ...sample(body), format }))?.header.format, format);
  const unknown = { ...sample(body), format: 'pmf-model-package/3' } as unknown as PackageHeader;
  assert.throws(() => encodePackagePrefix(unknown), /format must be pmf-model-package\/2 or pmf-model-package\/1/);
});
