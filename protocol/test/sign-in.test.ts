// What a client accepts while connecting from a mail address
// (protocol/sign-in.ts, protocol/sign-in-client.ts), against hostile answers:
// a discovery document or sign-in answer that is too big, redirected, names
// plain http or another domain, carries extra fields, or lies about the token.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, test } from 'node:test';
import { discoverProvider, signIn } from '../sign-in-client.js';
import { discoveryUrl, mailDomain, parseDiscovery, parseSignInAnswer } from '../sign-in.js';

const GOOD = {
  format: 'pmf-provider/1',
  provider: 'https://pmf.example.org',
  domains: ['example.org'],
  signIn: ['password'],
};

test('mail addresses: plain local@domain only, lowercased domain', () => {
  assert.equal(mailDomain('Alice.B+tag@Example.ORG'), 'example.org');
  assert.equal(mailDomain('alice@localhost'), 'localhost');
  for (const bad of [
    'alice',
    '@example.org',
    'alice@',
    'a b@example.org',
    'alice@example',
    'alice@exa_mple.org',
    'a"b@example.org',
    'alice@-x.org',
    'alice@10.0.0.1',
    `${'a'.repeat(65)}@example.org`,
    'alice@example.org/evil',
  ])
    assert.throws(() => mailDomain(bad), /Enter your mail address/, bad);
  assert.equal(discoveryUrl('example.org'), 'https://example.org/.well-known/pmf-provider.json');
  assert.equal(discoveryUrl('localhost'), 'http://localhost/.well-known/pmf-provider.json');
});

test('a discovery document is accepted only exactly as specified', () => {
  assert.deepEqual(parseDiscovery(GOOD, 'example.org'), GOOD);
  const bad: [unknown, RegExp][] = [
    [{ ...GOOD, provider: 'http://pmf.example.org' }, /https/],
    [{ ...GOOD, provider: 'https://pmf.example.org/path' }, /https/],
    [{ ...GOOD, provider: 'https://user:pw@pmf.example.org' }, /https/],
    [{ ...GOOD, provider: 'javascript:alert(1)' }, /https/],
    [{ ...GOOD, domains: ['other.example'] }, /does not list example.org/],
    [{ ...GOOD, domains: Array(101).fill('example.org') }, /domains/],
    [{ ...GOOD, format: 'pmf-provider/2' }, /format/],
    [{ ...GOOD, signIn: ['password', 'oauth'] }, /signIn/],
    [{ ...GOOD, extra: 1 }, /unexpected fields/],
    [[GOOD], /unexpected fields/],
    [null, /unexpected fields/],
  ];
  for (const [doc, why] of bad) assert.throws(() => parseDiscovery(doc, 'example.org'), why, JSON.stringify(doc));
  assert.equal(
    parseDiscovery({ ...GOOD, provider: 'http://127.0.0.1:8787', domains: ['localhost'] }, 'localhost').provider,
    'http://127.0.0.1:8787',
  );
});

test('a sign-in answer must carry a well-formed token and expiry, nothing else', () => {
  const token = `pmf_${'A'.repeat(43)}`;
  assert.deepEqual(parseSignInAnswer({ token, expiresAt: 1 }), { token, expiresAt: 1 });
  for (const bad of [
    { token },
    { token: 'x', expiresAt: 1 },
    { token, expiresAt: '1' },
    { token, expiresAt: 1, admin: true },
  ])
    assert.throws(() => parseSignInAnswer(bad), /not valid/);
});

let server: http.Server;
let base: string;
/** What the hostile server answers, by path. */
const answers = new Map<string, (res: http.ServerResponse) => void>();

before(async () => {
  server = http.createServer((req, res) => (answers.get(req.url ?? '') ?? ((r) => r.writeHead(404).end()))(res));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => server.close());

/** discoverProvider for alice@localhost, its requests sent to the hostile server. */
const discover = () =>
  discoverProvider('alice@localhost', (url, init) => fetch(String(url).replace('http://localhost', base), init));

test('discovery: a redirect, an oversize or endless body, an error status are refused in plain words', async () => {
  const path = '/.well-known/pmf-provider.json';
  answers.set(path, (res) => res.writeHead(302, { location: `${base}/elsewhere` }).end());
  answers.set('/elsewhere', (res) => res.end(JSON.stringify({ ...GOOD, domains: ['localhost'] })));
  await assert.rejects(discover(), /Could not find the private spam check for localhost/);
  answers.set(path, (res) => {
    res.writeHead(200);
    const chunk = ' '.repeat(64 * 1024);
    const pump = () => {
      while (res.write(chunk));
      res.once('drain', pump);
    };
    pump();
    res.on('close', () => res.removeAllListeners('drain'));
  });
  await assert.rejects(discover(), /not valid, so nothing was sent/);
  answers.set(path, (res) => res.writeHead(500).end());
  await assert.rejects(discover(), /does not offer private spam checking/);
  answers.set(path, (res) =>
    res.end(JSON.stringify({ ...GOOD, domains: ['localhost'], provider: 'http://evil.example' })),
  );
  await assert.rejects(discover(), /not valid/);
  answers.set(path, (res) => res.end(JSON.stringify({ ...GOOD, domains: ['localhost'], provider: base })));
  assert.equal((await discover()).provider, base);
});

test('sign-in: wrong password, lockout with its wait, and a forged answer are told apart', async () => {
  answers.set('/signin', (res) => res.writeHead(401).end('{}'));
  await assert.rejects(signIn(base, 'alice@localhost', 'pw'), /Wrong address or password/);
  answers.set('/signin', (res) => res.writeHead(429, { 'retry-after': '120' }).end('{}'));
  await assert.rejects(signIn(base, 'alice@localhost', 'pw'), (e: Error & { retryAt?: number }) => {
    assert.match(e.message, /Try again in 2 minute/);
    assert.ok(e.retryAt! > Date.now() + 100_000);
    return true;
  });
  answers.set('/signin', (res) => res.end(JSON.stringify({ token: 'pmf_short', expiresAt: 1 })));
  await assert.rejects(signIn(base, 'alice@localhost', 'pw'), /answer was not valid/);
  answers.set('/signin', (res) => res.end('x'.repeat(1 << 20)));
  await assert.rejects(signIn(base, 'alice@localhost', 'pw'), /answer was not valid/);
});
