import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validateDecryptRequest } from '../lib/messages.js';

const good = {
  block: { kind: 'encrypted', armored: '-----BEGIN PGP MESSAGE-----', pgpMime: false, extra: 'dropped' },
  source: { id: 'x', url: 'http://127.0.0.1:8080/mail/m/1', from: 'a', subject: 's', date: 'd' },
};

describe('validateDecryptRequest', () => {
  it('accepts a well-formed request and keeps only known fields', () => {
    const r = validateDecryptRequest(good);
    assert.deepEqual(r.block, { kind: 'encrypted', armored: '-----BEGIN PGP MESSAGE-----', pgpMime: false });
    assert.equal(r.source.url, good.source.url);
  });

  it('rejects malformed blocks, oversized metadata and non-web URLs with clear errors', () => {
    const bad: [unknown, RegExp][] = [
      [{ ...good, block: { ...good.block, kind: 'script' } }, /bad block/],
      [{ ...good, block: { ...good.block, armored: 42 } }, /bad block/],
      [{ ...good, block: undefined }, /bad block/],
      [{ ...good, source: { ...good.source, subject: 'x'.repeat(5000) } }, /bad message metadata/],
      [{ ...good, source: { ...good.source, from: undefined } }, /bad message metadata/],
      [{ ...good, source: { ...good.source, url: 'javascript:alert(1)' } }, /bad message URL/],
      [{ ...good, source: { ...good.source, url: 'not a url' } }, /bad message URL/],
    ];
    for (const [req, msg] of bad) assert.throws(() => validateDecryptRequest(req as typeof good), msg);
  });
});
