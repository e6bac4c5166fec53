import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  loadSecurityBackground,
  MAX_PHRASE_CHARS,
  randomSecurityBackground,
  saveSecurityBackground,
  securityPattern,
  validSecurityBackground,
} from '../lib/security-background.js';

describe('the security background', () => {
  it('is made at random once and kept; the user’s phrase is kept with it', async () => {
    const first = await loadSecurityBackground();
    assert.match(first.seed, /^[0-9a-f]{32}$/);
    assert.deepEqual(await loadSecurityBackground(), first, 'the same one next time');
    await saveSecurityBackground({ ...first, phrase: '  purple otter  ' });
    assert.deepEqual(await loadSecurityBackground(), { ...first, phrase: 'purple otter' });
  });

  it('differs between users: two random ones share no pattern', () => {
    const a = randomSecurityBackground();
    const b = randomSecurityBackground();
    assert.notEqual(a.seed, b.seed);
    assert.notEqual(securityPattern(a), securityPattern(b));
    assert.equal(securityPattern(a), securityPattern({ ...a }), 'the same seed draws the same pattern');
  });

  it('refuses a long phrase and a damaged record, in plain words', async () => {
    const b = randomSecurityBackground();
    assert.throws(() => validSecurityBackground({ ...b, phrase: 'x'.repeat(MAX_PHRASE_CHARS + 1) }), /40 characters/);
    assert.throws(() => validSecurityBackground({ ...b, seed: 'zz' }), /damaged/);
    assert.throws(() => validSecurityBackground({ ...b, hue: 400 }), /damaged/);
    await assert.rejects(saveSecurityBackground({ ...b, phrase: 'x'.repeat(99) }), /40 characters/);
  });

  it('draws only shapes in the user’s colour: no text or markup from outside', () => {
    const svg = securityPattern({ phrase: '<script>alert(1)</script>', hue: 123, seed: '00'.repeat(16) });
    assert.doesNotMatch(svg, /script|phrase/);
    assert.match(svg, /hsl\(123 /);
    assert.equal((svg.match(/<(circle|rect|polygon) /g) ?? []).length, 13, 'the tile and twelve shapes');
  });
});
