// The OPRF key a crypto worker reads from its file for each blocklist request
// is wiped once the request is evaluated (docs/crypto.md#secret-hygiene).
import assert from 'node:assert/strict';
import path from 'node:path';
import { test } from 'node:test';
import { oprf, oprfReady, useNativeEvaluateAll } from '../../protocol/oprf.js';
import { evaluateWithKeyFile } from '../src/blocklist.js';
import { writeSecretFile } from '../src/secret-file.js';
import { tempDir } from '../../scripts/test/temp-dir.js';

test("a blocklist request's copy of the OPRF key is zero after the evaluation", async () => {
  await oprfReady();
  const keys = oprf.generateKeyPair();
  const file = path.join(tempDir('pmf-oprf-key-'), 'key');
  writeSecretFile(file, keys.secretKey);
  const { blinded } = oprf.blind(new TextEncoder().encode('https://example.org/'));
  const seen: Uint8Array[] = [];
  useNativeEvaluateAll((key, elements) => {
    seen.push(key);
    return oprf.blindEvaluate(key.slice(), elements);
  });
  try {
    const evaluated = evaluateWithKeyFile(file, blinded);
    assert.deepEqual(evaluated, oprf.blindEvaluate(keys.secretKey, blinded), 'the evaluation itself is right');
  } finally {
    useNativeEvaluateAll();
  }
  assert.equal(seen.length, 1);
  assert.ok(
    seen[0].every((b) => b === 0),
    'the key read from the file is still in memory',
  );
});
