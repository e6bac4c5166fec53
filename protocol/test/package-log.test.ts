import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chainHeads, EMPTY_HEAD, validateLogDocument, type LogEntry } from '../package-log.js';
import { bytesToHex } from '@noble/hashes/utils.js';

const e: LogEntry = { modelId: 'spam', version: 1, packageSha256: 'ab'.repeat(32), createdAt: '2025-01-01T00:00:00Z' };

test('every field of an entry and its position are committed to by the head', () => {
  const [empty, head] = chainHeads([e]);
  assert.equal(empty, bytesToHex(EMPTY_HEAD));
  const variants: LogEntry[] = [
    { ...e, modelId: 'spam2' },
    { ...e, version: 2 },
    { ...e, packageSha256: 'ac'.repeat(32) },
    { ...e, createdAt: '2025-01-01T00:00:01Z' },
  ];
  for (const v of variants) assert.notEqual(chainHeads([v])[1], head, JSON.stringify(v));
  const other = { ...e, version: 2 };
  assert.notEqual(chainHeads([e, other])[2], chainHeads([other, e])[2], 'order matters');
});

test('a served log whose size does not match its entries, or with a bad entry, is rejected by shape', () => {
  const doc = {
    format: 'pmf-package-log/1',
    publicKey: '00'.repeat(32),
    head: '00'.repeat(32),
    signature: '00'.repeat(64),
  };
  assert.equal(validateLogDocument({ ...doc, size: 1, entries: [e] }).entries.length, 1);
  assert.throws(() => validateLogDocument({ ...doc, size: 2, entries: [e] }), /size 2 does not match the 1 entries/);
  assert.throws(
    () => validateLogDocument({ ...doc, size: 1, entries: [{ ...e, version: 0 }] }),
    /entry 0: version must be an integer/,
  );
});
