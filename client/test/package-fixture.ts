// A small, well-formed model package (random-looking body, tiny params) for
// download and storage tests; the crypto never reads it.
import { createHash } from 'node:crypto';
import { encodePackagePrefix, PACKAGE_FORMAT, type PackageHeader } from '../../protocol/package.js';
import { makeParams } from '../../wasm/ts/he.js';

export function testPackage(body: Uint8Array, modelVersion = 1): { header: PackageHeader; bytes: Uint8Array } {
  const header: PackageHeader = {
    format: PACKAGE_FORMAT,
    modelId: 'spam',
    modelVersion,
    task: 'spam',
    algorithm: 'lr',
    labels: ['ham', 'spam'],
    featureSpec: {},
    params: makeParams({ N: 10, B: 1 }),
    layout: 'rows-across',
    providerSeed: '11'.repeat(32),
    bodyBytes: body.length,
    bodySha256: createHash('sha256').update(body).digest('hex'),
    createdAt: new Date(0).toISOString(),
  };
  const prefix = encodePackagePrefix(header);
  const bytes = new Uint8Array(prefix.length + body.length);
  bytes.set(prefix);
  bytes.set(body, prefix.length);
  return { header, bytes };
}
