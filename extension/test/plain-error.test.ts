import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyError } from '../lib/errors.js';
import { toPlain } from '../lib/plain-error.js';

describe('errors in plain words', () => {
  it("keeps our own sentences (and a background reply's detail) as they are", () => {
    assert.deepEqual(toPlain(new Error('Select a message first.')), {
      message: 'Select a message first.',
      detail: undefined,
    });
    assert.equal(toPlain(new KeyError('wrong-passphrase', 'Wrong passphrase.')).message, 'Wrong passphrase.');
    assert.deepEqual(toPlain(Object.assign(new Error('Unlock first.'), { detail: 'TypeError: x' })), {
      message: 'Unlock first.',
      detail: 'TypeError: x',
    });
  });

  it('turns minified technical errors into a sentence, the original kept as a detail', () => {
    const e = toPlain(new TypeError('r.messageDisplay.getDisplayedMessage is not a function'));
    assert.match(e.message, /lacks a feature the add-on needs\. Update/);
    assert.doesNotMatch(e.message, /getDisplayedMessage|r\./);
    assert.equal(e.detail, 'TypeError: r.messageDisplay.getDisplayedMessage is not a function');
    assert.match(
      toPlain(new TypeError('NetworkError when attempting to fetch resource.')).message,
      /could not be reached/,
    );
    assert.match(toPlain(new RangeError('Invalid array length')).message, /Something went wrong.*details below/);
    assert.match(toPlain('boom').message, /Something went wrong/);
  });
});
