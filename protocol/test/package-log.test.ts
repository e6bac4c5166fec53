import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bytesToHex } from '@noble/hashes/utils.js';
import { hashLeaf } from '../merkle.js';
import { encodeEntry, entryLeafHash, validateLogDocument, validateProofBundle, type LogEntry } from '../package-log.js';

const e: LogEntry = { modelId: 'spam', version: 1, packageSha256: 'ab'.repeat(32), createdAt: '2025-01-01T00:00:00Z' };

test('a leaf commits to every field of its entry, length-prefixed, as an RFC 6962 leaf', () => {
  assert.equal(
    bytesToHex(encodeEntry(e)),
    `0004${bytesToHex(new TextEncoder().encode('spam'))}00000001${'ab'.repeat(32)}0014${bytesToHex(new TextEncoder().encode(e.createdAt))}`,
  );
  assert.deepEqual(entryLeafHash(e), hashLeaf(encodeEntry(e)));
  const variants: LogEntry[] = [
    { ...e, modelId: 'spam2' },
    { ...e, version: 2 },
    { ...e, packageSha256: 'ac'.repeat(32) },
    { ...e, createdAt: '2025-01-01T00:00:01Z' },
  ];
  for (const v of variants)
    assert.notEqual(bytesToHex(entryLeafHash(v)), bytesToHex(entryLeafHash(e)), JSON.stringify(v));
});

test('served documents and proof bundles of the wrong format or with bad parts are refused by shape', () => {
  const head = { format: 'pmf-package-log/2', logKey: 'k', checkpoint: 'c' };
  assert.equal(validateLogDocument({ ...head, entries: [e] }).entries.length, 1);
  assert.throws(
    () => validateLogDocument({ ...head, format: 'pmf-package-log/1', entries: [] }),
    /format must be pmf-package-log\/2/,
  );
  assert.throws(
    () => validateLogDocument({ ...head, entries: [{ ...e, version: 0 }] }),
    /entry 0: version must be an integer/,
  );
  const proof = ['47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU='];
  assert.deepEqual(validateProofBundle({ ...head, inclusion: { index: 0, entry: e, proof } }).inclusion?.proof, proof);
  assert.throws(
    () => validateProofBundle({ ...head, inclusion: { index: 0, entry: e, proof: ['AAAA'] } }),
    /not 32 bytes/,
  );
  assert.throws(
    () => validateProofBundle({ ...head, consistency: { from: 1, proof: Array(65).fill(proof[0]) } }),
    /at most 64/,
  );
  assert.throws(() => validateProofBundle({ ...head, consistency: { from: -1, proof } }), /bad consistency proof/);
});
