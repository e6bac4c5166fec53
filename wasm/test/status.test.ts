// One error vocabulary at the wasm boundary: the TS mirror of the C++ status
// enum matches it name for name, and the wrappers throw CoreError with the code.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { loadHe } from '../ts/he.js';
import { CoreError, Status } from '../ts/status.js';

test('wasm/ts/status.ts mirrors wasm/src/common/status.h', () => {
  const header = fs.readFileSync(new URL('../src/common/status.h', import.meta.url), 'utf8');
  const cpp = Object.fromEntries([...header.matchAll(/^\s*k(\w+) = (-?\d+),/gm)].map((m) => [m[1], Number(m[2])]));
  assert.deepEqual(cpp, Status);
});

test('a core failure surfaces as a CoreError carrying its status code', async () => {
  const he = await loadHe();
  assert.throws(
    () => he.loadSecretKey(new Uint8Array(10)),
    (e: unknown) => e instanceof CoreError && e.code === Status.BadLength && /^secret key: /.test(e.message),
  );
});
