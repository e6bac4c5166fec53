import assert from 'node:assert/strict';
import { test } from 'node:test';
import { blocklistItems, itemOf, registrableDomain } from '../blocklist-items.js';
import { parseMessage } from '../mime.js';
import { PDF_ATTACHMENT } from './parts.js';

test('items come from text and HTML links and attachments, normalized, without repeats', async () => {
  const raw = [
    'Content-Type: multipart/mixed; boundary=b',
    '',
    '--b',
    'Content-Type: text/html',
    '',
    '<p>Log in at <a href="HTTPS://Login.Bank.co.uk.:443/a?x=1#frag">here</a> or http://evil.example/x.</p>',
    ...PDF_ATTACHMENT,
  ].join('\n');
  const items = blocklistItems(await parseMessage(raw), 32);
  assert.deepEqual(items, [
    'sha256:e5c62df5dab5c87b6a015ef3d43597074d1eec433b15f51aec63b8582d0e4ab4',
    'domain:evil.example',
    'domain:bank.co.uk',
    'host:evil.example',
    'host:login.bank.co.uk',
    'url:http://evil.example/x',
    'url:https://login.bank.co.uk/a?x=1',
  ]);
  assert.equal(blocklistItems(await parseMessage(raw), 3).length, 3);
});

test('a list entry normalizes like the mail it must match', () => {
  assert.equal(itemOf('host', 'Login.Bank.co.uk.'), 'host:login.bank.co.uk');
  assert.equal(itemOf('domain', 'login.bank.co.uk'), 'domain:bank.co.uk');
  assert.equal(itemOf('url', 'https://login.bank.co.uk:443/a?x=1#f'), 'url:https://login.bank.co.uk/a?x=1');
  assert.equal(itemOf('domain', 'bücher.example'), 'domain:xn--bcher-kva.example');
  assert.equal(itemOf('sha256', 'AB'.repeat(32)), `sha256:${'ab'.repeat(32)}`);
  assert.equal(itemOf('sha256', 'xyz'), undefined);
  assert.equal(itemOf('url', 'ftp://x.example/'), undefined);
  assert.equal(registrableDomain('a.b.example.com'), 'example.com');
  assert.equal(registrableDomain('192.0.2.1'), '192.0.2.1');
});
