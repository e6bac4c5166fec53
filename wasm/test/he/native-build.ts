// Builds the lattice sources natively with the system compiler (scalar code
// paths, no wasm SIMD) together with one test harness from this folder, for
// the tests that run them outside WebAssembly (he-native, he-ct).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const wasmDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** Compiles `harness` (a .cpp file in wasm/test/he/) with every he/ source; returns the executable and its cleanup. */
export function buildNative(harness: string, extraFlags: string[] = []): { exe: string; dispose(): void } {
  const src = path.join(wasmDir, 'src');
  const sources = [
    'common/chacha20.cpp',
    'common/rng.cpp',
    ...fs
      .readdirSync(path.join(src, 'he'))
      .filter((f) => f.endsWith('.cpp'))
      .map((f) => `he/${f}`),
  ].map((f) => path.join(src, f));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-he-'));
  const exe = path.join(dir, path.basename(harness, '.cpp'));
  try {
    execFileSync('c++', [
      '-std=c++17',
      '-O2',
      '-Wall',
      '-Wextra',
      '-Werror',
      ...extraFlags,
      `-I${src}`,
      ...sources,
      path.join(wasmDir, 'test/he', harness),
      '-o',
      exe,
    ]);
  } catch (e) {
    fs.rmSync(dir, { recursive: true, force: true });
    throw e;
  }
  return { exe, dispose: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
