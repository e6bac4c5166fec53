// The same C++ sources built natively with the system compiler (scalar code
// paths, no wasm SIMD) reproduce the pinned seed-expansion vectors and a
// model round trip: the known answers are shared by both builds (docs/crypto.md#tests).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { PINNED_EXPANSION } from './he/fixtures.js';

const wasmDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

it('native build: pinned expansion digests and a dot/extract/decrypt round trip', () => {
  const src = path.join(wasmDir, 'src');
  const sources = [
    'common/chacha20.cpp',
    'common/rng.cpp',
    ...fs
      .readdirSync(path.join(src, 'he'))
      .filter((f) => f.endsWith('.cpp'))
      .map((f) => `he/${f}`),
  ].map((f) => path.join(src, f));
  const exe = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-he-')), 'native_kat');
  try {
    execFileSync('c++', [
      '-std=c++17',
      '-O2',
      '-Wall',
      '-Wextra',
      '-Werror',
      `-I${src}`,
      ...sources,
      path.join(wasmDir, 'test/he/native_kat.cpp'),
      '-o',
      exe,
    ]);
    const out = execFileSync(exe, { encoding: 'utf8', maxBuffer: 1 << 20 });
    const lines = Object.fromEntries(
      out
        .trim()
        .split('\n')
        .map((l) => l.split(/ (.*)/s).slice(0, 2)),
    );
    for (const limb of [0, 1]) {
      const digest = createHash('sha256')
        .update(Buffer.from(lines[`expand${limb}`], 'hex'))
        .digest('hex');
      assert.equal(digest, PINNED_EXPANSION[limb], `limb ${limb}`);
    }
    const [got, want] = lines.roundtrip.split(' ');
    assert.equal(got, want);
  } finally {
    fs.rmSync(path.dirname(exe), { recursive: true, force: true });
  }
});
