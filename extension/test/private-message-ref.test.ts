import assert from 'node:assert/strict';
import { it } from 'node:test';
import { deliveredId } from '../private/message-ref.js';

const source = (url: string, id: string) => ({ id, url, from: 'a', subject: 's', date: 'd' });

it('offers only mail shown by the provider’s own webmail, under the id it was delivered with', () => {
  const provider = 'http://127.0.0.1:8787';
  assert.equal(deliveredId(source(`${provider}/mail/m/x`, `${provider}/mail#spam-1`), provider), 'spam-1');
  assert.equal(
    deliveredId(source('http://127.0.0.1:9999/mail/m/x', 'http://127.0.0.1:9999/mail#spam-1'), provider),
    undefined,
  );
  assert.equal(deliveredId(source(`${provider}/mail/m/x`, 'http://evil.example/mail#spam-1'), provider), undefined);
  assert.equal(deliveredId(source('mid:abc', 'thunderbird#1'), provider), undefined);
  assert.equal(deliveredId(source(`${provider}/mail/m/x`, `${provider}/mail#`), provider), undefined);
});
