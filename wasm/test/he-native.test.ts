// The same C++ sources built natively with the system compiler (scalar code
// paths, no wasm SIMD) reproduce the pinned seed-expansion vectors and a
// model round trip: the known answers are shared by both builds (docs/crypto.md#tests).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { it } from 'node:test';
import { PINNED_EXPANSION, PINNED_EXPANSION_CHACHA8 } from './he/fixtures.js';
import { buildNative } from './he/native-build.js';

it('native build: pinned expansion digests and a dot/extract/decrypt round trip', () => {
  const { exe, dispose } = buildNative('native_kat.cpp');
  try {
    const out = execFileSync(exe, { encoding: 'utf8', maxBuffer: 1 << 20 });
    const lines = Object.fromEntries(
      out
        .trim()
        .split('\n')
        .map((l) => l.split(/ (.*)/s).slice(0, 2)),
    );
    for (const limb of [0, 1, 2]) {
      const digest = createHash('sha256')
        .update(Buffer.from(lines[`expand${limb}`], 'hex'))
        .digest('hex');
      assert.equal(digest, PINNED_EXPANSION[limb], `limb ${limb}`);
    }
    for (const limb of [0, 1]) {
      const digest = createHash('sha256')
        .update(Buffer.from(lines[`expand8_${limb}`], 'hex'))
        .digest('hex');
      assert.equal(digest, PINNED_EXPANSION_CHACHA8[limb], `ChaCha8, limb ${limb}`);
    }
    const [got, want] = lines.roundtrip.split(' ');
    assert.equal(got, want);
  } finally {
    dispose();
  }
});
