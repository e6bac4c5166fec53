import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { VIEWER_HEIGHT_STEP, VIEWER_MAX_HEIGHT, viewerHeight } from '../lib/viewer-height.js';

describe('viewerHeight: what the page may learn of the decrypted text’s height', () => {
  it('rounds up to a step and stops at the maximum', () => {
    assert.equal(viewerHeight(1), VIEWER_HEIGHT_STEP);
    assert.equal(viewerHeight(VIEWER_HEIGHT_STEP), VIEWER_HEIGHT_STEP);
    assert.equal(viewerHeight(VIEWER_HEIGHT_STEP + 1), 2 * VIEWER_HEIGHT_STEP);
    assert.equal(viewerHeight(10 * VIEWER_MAX_HEIGHT), VIEWER_MAX_HEIGHT);
  });

  it('takes a few values only, whatever it is told', () => {
    const seen = new Set<number>();
    for (let h = -10; h < 3 * VIEWER_MAX_HEIGHT; h += 7) seen.add(viewerHeight(h));
    for (const odd of [NaN, Infinity, '523', null, undefined, {}]) seen.add(viewerHeight(odd));
    assert.deepEqual(
      [...seen].sort((a, b) => a - b),
      Array.from({ length: VIEWER_MAX_HEIGHT / VIEWER_HEIGHT_STEP }, (_, i) => (i + 1) * VIEWER_HEIGHT_STEP),
    );
  });

  it('gives a hostile page’s proof-of-concept heights (523, 178, 150 px) no more than two values', () => {
    assert.deepEqual([523, 178, 150].map(viewerHeight), [600, 200, 200]);
  });
});
