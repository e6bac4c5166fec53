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

it('offers mail another webmail (Roundcube) read from its server under the id the provider’s LMTP stage assigned', () => {
  const provider = 'http://127.0.0.1:8787';
  const page = source('http://127.0.0.1:9999/mail/?_task=mail&_action=show&_uid=3&_mbox=INBOX', 'rc#INBOX/3');
  const assigned = 'pmf-0123456789abcdef0123456789abcdef';
  assert.equal(deliveredId({ ...page, providerId: assigned }, provider), assigned);
  assert.equal(deliveredId({ ...page, providerId: '<sender-chosen@example.org>' }, provider), undefined);
  assert.equal(deliveredId(page, provider), undefined, 'no assigned id: not the provider’s delivery');
});
