// One-click connect from a webmail page, as an attacker would try it: the
// webmail server's answer is read strictly (adapters/adapter.ts issuedToken),
// and the provider it names must be exactly an origin
// (private/provider-permission.ts oneClickProvider), one on this computer
// only from a page on it; a non-loopback one the browser has not allowed is
// refused in plain words. The background's own
// checks (not connected yet, permission held) run in e2e/roundcube.e2e.ts and
// e2e/private-spam.e2e.ts.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { issuedToken } from '../content/adapters/adapter.js';
import { oneClickNeedsPermission, oneClickProvider } from '../private/provider-permission.js';

const answer = (body: unknown, status = 200) =>
  new Response(typeof body === 'string' ? body : JSON.stringify(body), {
    status,
    headers: { 'content-type': 'application/json' },
  });

describe('a webmail’s token answer', () => {
  it('gives the token, and the provider only when the answer names one', async () => {
    assert.deepEqual(await issuedToken(answer({ token: 'pmf_a' })), { token: 'pmf_a' });
    assert.deepEqual(await issuedToken(answer({ token: 'pmf_a', provider: 'https://pmf.example.org' })), {
      token: 'pmf_a',
      provider: 'https://pmf.example.org',
    });
  });

  it('refuses anything else, with the webmail’s own short reason when it gives one', async () => {
    for (const [body, status] of [
      [{ token: '' }, 200],
      [{ token: 5 }, 200],
      [{ token: 'x'.repeat(4097) }, 200],
      [{ token: 'pmf_a', provider: 7 }, 200],
      [{ token: 'pmf_a' }, 500],
      ['<html>login</html>', 200],
      ['null', 200],
    ] as const)
      await assert.rejects(issuedToken(answer(body, status)), /gave no token \(HTTP \d+\)/, JSON.stringify(body));
    await assert.rejects(issuedToken(answer({ error: 'Too many connections this minute.' }, 429)), /^Error: Too many/);
    await assert.rejects(issuedToken(answer({ error: 'x'.repeat(201) }, 429)), /gave no token \(HTTP 429\)/);
  });
});

describe('the provider one-click connect goes to', () => {
  const page = 'http://127.0.0.1:8080/mail/?_task=mail';
  it('is the page’s origin, or exactly the origin the webmail’s server named', () => {
    assert.equal(oneClickProvider(undefined, page), 'http://127.0.0.1:8080');
    assert.equal(oneClickProvider('http://127.0.0.1:8787', page), 'http://127.0.0.1:8787');
    assert.equal(oneClickProvider('https://pmf.example.org/', page), 'https://pmf.example.org');
  });

  it('is never a path, credentials, another scheme or anything but a string', () => {
    for (const bad of [
      'https://pmf.example.org/session',
      'https://user@pmf.example.org',
      'https://pmf.example.org?x',
      'HTTPS://PMF.example.org',
      'javascript:alert(1)',
      'ftp://pmf.example.org',
      'not a url',
      '',
      null,
      3,
      { toString: () => 'https://pmf.example.org' },
      `https://${'a'.repeat(2050)}.org`,
    ])
      assert.throws(() => oneClickProvider(bad, page), /no valid provider address/, String(bad));
  });

  it('is on this computer only when the webmail page is', () => {
    assert.equal(oneClickProvider('http://localhost:8787', 'http://localhost:1/mail/'), 'http://localhost:8787');
    assert.throws(
      () => oneClickProvider('http://127.0.0.1:8787', 'https://mail.example.org/roundcube/'),
      /a provider on this computer/,
    );
    assert.equal(oneClickProvider('https://pmf.example.org', 'https://mail.example.org/'), 'https://pmf.example.org');
  });

  it('a provider the browser has not allowed is explained, naming its host', () => {
    const text = oneClickNeedsPermission('https://pmf.example.org:8443');
    assert.match(text, /pmf\.example\.org:8443/);
    assert.match(text, /Private Mail Functions settings/);
    assert.match(text, /Nothing was sent/);
  });
});
