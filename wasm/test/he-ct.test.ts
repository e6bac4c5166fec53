// docs/crypto.md#constant-time-discipline, checked on the native build: the
// harness marks secrets as undefined for Valgrind's memcheck, which then
// reports every branch or memory index that depends on them (the "ctgrind"
// method). scripts/setup.sh installs Valgrind.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { it } from 'node:test';
import { buildNative } from './he/native-build.js';

it('no branch or memory index depends on secrets in the checked lattice routines (memcheck)', () => {
  execFileSync('valgrind', ['--version']); // a missing Valgrind fails here, clearly
  const { exe, dispose } = buildNative('ct_check.cpp', ['-g']);
  try {
    const run = spawnSync('valgrind', ['--error-exitcode=3', '--errors-for-leak-kinds=none', exe], {
      encoding: 'utf8',
    });
    assert.equal(run.status, 0, `memcheck found secret-dependent control flow:\n${run.stderr}`);
    assert.match(run.stdout, /sk_precompute \d+/);
    assert.match(run.stdout, /key_switch T=8 \d+/);
  } finally {
    dispose();
  }
});
