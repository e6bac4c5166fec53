// The client reads both model package formats (docs/wire-formats.md#model-package):
// format 2, whose records' a are expanded with ChaCha8 (what providers build),
// and format 1 (ChaCha20), so a package stored before format 2 still
// classifies exactly; the header's format, not a default, decides.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { concatBytes } from '@noble/hashes/utils.js';
import { LEGACY_PACKAGE_FORMAT, PACKAGE_FORMAT, packageARounds, type PackageHeader } from '../../protocol/package.js';
import { plainDot, randomEmail, randomWeights } from '../../wasm/test/he/fixtures.js';
import { localSession } from '../../wasm/test/he/local-session.js';
import { loadHe, makeParams, type HeParams } from '../../wasm/ts/he.js';
import { makeSpec } from '../../models/features/index.js';
import { loadModel } from '../core/provider-session.js';

const header = (format: PackageHeader['format'], params: HeParams, bodyBytes: number): PackageHeader => ({
  format,
  modelId: 'spam',
  modelVersion: 1,
  task: 'spam',
  algorithm: 'lr',
  labels: ['ham', 'spam'],
  featureSpec: { ...makeSpec({ N: params.N }) },
  params,
  layout: 'rows-across',
  providerSeed: '11'.repeat(32),
  bodyBytes,
  bodySha256: '00'.repeat(32),
  createdAt: new Date(0).toISOString(),
});

test('packages of format 2 (ChaCha8) and format 1 (ChaCha20) both load and decrypt to the plaintext dot product', async () => {
  const he = await loadHe();
  const params = makeParams({ N: 300, B: 1, T: 24 });
  const sk = he.loadSecretKey(he.generateSecretKey());
  const session = localSession(he, sk, he.randomSeed(), params.T);
  const weights = randomWeights(params);
  const email = randomEmail(params.N, 40, 15);
  const mask = 2 ** params.T - 1;
  const decrypt = (h: PackageHeader, body: Uint8Array): number => {
    const loaded = loadModel(he, { header: h, body, sha256: '' });
    const acc = loaded.model.dot(email);
    const [x] = loaded.model.extract(acc, [0], session.pk, session.ksk);
    acc.dispose();
    loaded.model.dispose();
    return (session.user.forContext(params).decryptLwe(x.lwe) - x.mask) & mask;
  };
  const want = plainDot(params, weights, email, 0);
  for (const format of [PACKAGE_FORMAT, LEGACY_PACKAGE_FORMAT] as const) {
    const rounds = packageARounds(header(format, params, 0));
    const body = concatBytes(...sk.forContext(params).encryptModel(weights, rounds));
    assert.equal(decrypt(header(format, params, body.length), body), want, format);
    const other = format === PACKAGE_FORMAT ? LEGACY_PACKAGE_FORMAT : PACKAGE_FORMAT;
    assert.notEqual(decrypt(header(other, params, body.length), body), want, `${format} read as ${other}`);
  }
  assert.deepEqual(
    ([PACKAGE_FORMAT, LEGACY_PACKAGE_FORMAT] as const).map((f) => packageARounds(header(f, params, 0))),
    [8, 20],
  );
  session.dispose();
  sk.dispose();
});
