// A valid spam package header for tests that build packages by hand.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { makeParams } from '../../wasm/ts/he.js';
import { PACKAGE_FORMAT, type PackageHeader } from '../package.js';

/** The header of a spam package whose body is `body`. */
export function samplePackageHeader(body: Uint8Array): PackageHeader {
  return {
    format: PACKAGE_FORMAT,
    modelId: 'spam',
    modelVersion: 1,
    task: 'spam',
    algorithm: 'lr',
    labels: ['ham', 'spam'],
    featureSpec: { id: 'hash-v1', N: 1024 },
    params: makeParams({ N: 1024, B: 1, T: 24, b_in: 8, f_in: 3 }),
    layout: 'rows-across',
    providerSeed: 'ab'.repeat(32),
    bodyBytes: body.length,
    bodySha256: bytesToHex(sha256(body)),
    createdAt: new Date(0).toISOString(),
  };
}
