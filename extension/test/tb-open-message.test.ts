// Thunderbird: a search result opens its message by Message-ID (against the fake messenger).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { messageIdOf, openMessage } from '../thunderbird/open-message.js';
import { fakeMessenger, header } from './fake-messenger.js';

describe('opening a search result in Thunderbird', () => {
  it('reads the Message-ID out of a mid: address only', () => {
    assert.equal(messageIdOf('mid:m1@example.org'), 'm1@example.org');
    for (const other of [
      undefined,
      '',
      'mid:',
      'https://mail.example/m/1',
      'mid:a b@x',
      'mid:<a@x>',
      `mid:${'a'.repeat(999)}`,
    ]) {
      assert.equal(messageIdOf(other), undefined, String(other));
    }
  });

  it('opens the message in a tab, and says so in plain words when it is gone', async () => {
    const { api, calls } = fakeMessenger({ mail: [{ header: header(1), raw: '' }] });
    await openMessage(api, 'm1@example.org');
    assert.deepEqual(calls, ['open:m1@example.org']);
    await assert.rejects(openMessage(api, 'gone@example.org'), /could not open this message/);
  });
});
