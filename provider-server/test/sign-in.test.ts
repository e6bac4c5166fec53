// Connecting without an operator (sign-in/, docs/connecting.md), as attacks
// against a running provider whose sign-in asks a real Dovecot (its
// auth-client socket): the discovery document a client accepts; the mail
// password, and only it, gives a token that opens a session, refreshes and
// is revoked by its holder; guessing is locked out per account and per
// address, also when fired all at once; hostile requests (huge, forms, web
// pages, extra fields) are refused; nothing typed reaches the logs.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { dovecotInstalled, startDovecot, type Dovecot } from '../../e2e/fixtures/dovecot.js';
import { DISCOVERY_PATH, parseDiscovery } from '../../protocol/sign-in.js';
import { keepTokenAlive, revokeToken, signIn, tokenId } from '../../protocol/sign-in-client.js';
import { signInConfig } from '../src/sign-in/config.js';
import { NONCE, startHarness, TestClient, type Harness } from './harness.js';

const skip = dovecotInstalled() ? false : 'Dovecot is not installed (scripts/setup.sh installs it)';
const USERS: Record<string, string> = { alice: 'imap-secret', bob: 'bob-secret' };
for (let i = 0; i < 25; i++) USERS[`user${i}`] = `secret-${i}`;
let dir: string;
let dovecot: Dovecot;
let h: Harness;

/** One sign-in as a client at `from` (the trusted proxy's X-Forwarded-For). */
const post = (body: unknown, from = '192.0.2.1', headers: Record<string, string> = {}) =>
  fetch(`${h.server.httpUrl}/signin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': from, ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });

const hello = async (token: string): Promise<string> => {
  const c = await TestClient.connect(h.server.wsUrl);
  try {
    const r = await c.request('hello', 1, { token, modelId: 'spam', modelVersion: 2, clientNonce: NONCE, keyEpoch: 0 });
    return r.name;
  } finally {
    c.close();
  }
};

before(async () => {
  if (skip) return;
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-sign-in-'));
  fs.chmodSync(dir, 0o755); // Dovecot runs as nobody
  dovecot = await startDovecot(path.join(dir, 'dovecot'), USERS);
  h = await startHarness(
    { hellosPerMinute: 1000 },
    {
      trustedProxies: ['127.0.0.1'],
      signIn: {
        publicUrl: 'https://pmf.example.org',
        domains: ['example.org'],
        dovecotAuth: path.join(dir, 'dovecot', 'run', 'auth-client'),
      },
    },
  );
});
after(async () => {
  await h?.close();
  await dovecot?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('sign-in with the mail account against a real Dovecot', { skip }, () => {
  test('the discovery document names the provider and its domains, and a client accepts it', async () => {
    const r = await fetch(`${h.server.httpUrl}${DISCOVERY_PATH}`);
    assert.equal(r.status, 200);
    const doc = parseDiscovery(await r.json(), 'example.org');
    assert.deepEqual(doc, {
      format: 'pmf-provider/1',
      provider: 'https://pmf.example.org',
      domains: ['example.org'],
      signIn: ['password'],
    });
    assert.throws(() => parseDiscovery(doc, 'evil.example'), /does not list evil.example/);
  });

  test('the mail password gives a token that opens a session; a wrong one gives 401 and no token', async () => {
    const { token, expiresAt } = await signIn(h.server.httpUrl, 'alice@example.org', 'imap-secret');
    assert.ok(expiresAt > Date.now() + 80 * 86_400_000, 'the default 90-day lifetime');
    assert.equal(await hello(token), 'welcome');
    const userId = (await h.store.userId('alice'))!;
    assert.ok(userId, 'the store user was made on the first sign-in');
    const mine = await h.store.tokens.list(userId, { lifetimeMs: 90 * 86_400_000 });
    assert.deepEqual(
      mine.map((t) => [t.id, t.kind]),
      [[await tokenId(token), 'signin']],
    );
    const wrong = await post({ address: 'alice@example.org', password: 'imap-secreT' }, '192.0.2.2');
    assert.equal(wrong.status, 401);
    assert.deepEqual(await wrong.json(), { error: 'wrong address or password' });
    // Bob's password does not open Alice's account, nor does Alice's address with Bob's name in it.
    assert.equal((await post({ address: 'alice@example.org', password: 'bob-secret' }, '192.0.2.2')).status, 401);
  });

  test('an address at a domain this provider does not serve is refused before Dovecot is asked', async () => {
    // Dovecot's passdb uses %n (the local part): without the domain check, alice@evil.example would be alice.
    const r = await post({ address: 'alice@evil.example', password: 'imap-secret' }, '192.0.2.3');
    assert.equal(r.status, 403);
    assert.match(((await r.json()) as { error: string }).error, /does not serve addresses at evil.example/);
  });

  test('the token refreshes with use and its holder revokes it: then it opens nothing', async () => {
    const { token } = await signIn(h.server.httpUrl, 'bob@example.org', 'bob-secret');
    const other = (await signIn(h.server.httpUrl, 'alice@example.org', 'imap-secret')).token;
    const expires = await keepTokenAlive(h.server.httpUrl, token);
    assert.ok(typeof expires === 'number' && expires > Date.now() + 80 * 86_400_000);
    // Bob cannot revoke Alice's token by its id.
    const cross = await fetch(`${h.server.httpUrl}/tokens/${await tokenId(other)}`, {
      method: 'DELETE',
      headers: { authorization: `Bearer ${token}` },
    });
    assert.equal(cross.status, 404);
    assert.equal(await hello(other), 'welcome', 'Alice’s token still works');
    assert.equal(await revokeToken(h.server.httpUrl, token), true);
    assert.equal(await keepTokenAlive(h.server.httpUrl, token), 'refused');
    assert.equal(await hello(token), 'error');
  });

  test('guesses fired all at once: five reach Dovecot, the rest and then the right password are locked out', async () => {
    const answers = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        post({ address: 'user0@example.org', password: `guess-${i}` }, `198.51.100.${i}`),
      ),
    );
    const statuses = answers.map((r) => r.status).sort();
    assert.deepEqual(statuses, [...Array(5).fill(401), ...Array(7).fill(429)]);
    const right = await post({ address: 'user0@example.org', password: 'secret-0' }, '198.51.100.99');
    assert.equal(right.status, 429, 'locked: even the right password waits');
    const wait = Number(right.headers.get('retry-after'));
    assert.ok(wait > 0 && wait <= 60, `Retry-After ${wait}`);
    // Another account is not locked by it (from a fresh address).
    assert.equal((await post({ address: 'user1@example.org', password: 'secret-1' }, '198.51.100.100')).status, 200);
  });

  test('one address spraying many accounts is locked out after 20 failures, for every account', async () => {
    const from = '203.0.113.7';
    const answers = await Promise.all(
      Array.from({ length: 22 }, (_, i) =>
        post({ address: `user${i + 2}@example.org`, password: 'Winter2026!' }, from),
      ),
    );
    assert.deepEqual(answers.map((r) => r.status).sort(), [...Array(20).fill(401), 429, 429]);
    const right = await post({ address: 'user24@example.org', password: 'secret-24' }, from);
    assert.equal(right.status, 429, 'the address is locked, whichever account it names');
    assert.equal((await post({ address: 'user24@example.org', password: 'secret-24' }, '203.0.113.8')).status, 200);
  });

  test('hostile requests are refused: huge, a form, a web page, extra fields, no JSON, other methods', async () => {
    const from = '192.0.2.50';
    const huge = await post(JSON.stringify({ address: 'alice@example.org', password: 'x'.repeat(1 << 20) }), from);
    assert.equal(huge.status, 413);
    const form = await post('address=alice%40example.org&password=imap-secret', from, {
      'content-type': 'application/x-www-form-urlencoded',
    });
    assert.equal(form.status, 415);
    const page = await post({ address: 'alice@example.org', password: 'imap-secret' }, from, {
      origin: 'https://evil.example',
    });
    assert.equal(page.status, 403);
    assert.equal(page.headers.get('access-control-allow-origin'), null);
    for (const body of [
      { address: 'alice@example.org', password: 'imap-secret', admin: true },
      { address: 'alice@example.org' },
      { address: 'alice', password: 'imap-secret' },
      { address: 'alice@example.org', password: 'a\0b' },
      'not json',
      [],
    ])
      assert.equal((await post(body, from)).status, 400, JSON.stringify(body));
    assert.equal((await fetch(`${h.server.httpUrl}/signin`)).status, 405);
    // The server is still fine.
    assert.equal((await post({ address: 'bob@example.org', password: 'bob-secret' }, from)).status, 200);
  });

  test('no password, address or token reaches the log', async () => {
    const { token } = await signIn(h.server.httpUrl, 'alice@example.org', 'imap-secret');
    await post({ address: 'imap-secret@example.org', password: 'typed-into-the-wrong-field' }, '192.0.2.60');
    const log = h.logs.join('\n');
    assert.match(log, /signed in: user #\d+ from 127\.0\.0\.1/);
    for (const secret of ['imap-secret', 'bob-secret', 'typed-into-the-wrong-field', 'Winter2026', token, 'alice@'])
      assert.ok(!log.includes(secret), `the log holds ${secret}`);
  });
});

describe('sign-in when Dovecot gives no verdict', { skip }, () => {
  test('503, and the attempts do not lock the account', async () => {
    const down = await startHarness(
      {},
      {
        signIn: {
          publicUrl: 'http://127.0.0.1:1',
          domains: ['example.org'],
          dovecotAuth: path.join(dir, 'no-such-socket'),
        },
      },
    );
    try {
      for (let i = 0; i < 7; i++) {
        const r = await fetch(`${down.server.httpUrl}/signin`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ address: 'alice@example.org', password: 'imap-secret' }),
        });
        assert.equal(r.status, 503);
      }
      assert.ok(down.logs.some((l) => /Dovecot auth is unreachable/.test(l)));
    } finally {
      await down.close();
    }
  });
});

test('a sign-in configuration that would send passwords in the clear or name no domain is refused at start', () => {
  const good = { publicUrl: 'https://pmf.example.org', domains: ['example.org'], dovecotAuth: '/run/dovecot/auth-pmf' };
  assert.deepEqual(signInConfig(good), { ...good, service: 'imap', timeoutMs: 20_000 });
  assert.equal(signInConfig({ ...good, dovecotAuth: '127.0.0.1:9999' })?.dovecotAuth, '127.0.0.1:9999');
  assert.equal(signInConfig(undefined), undefined, 'not configured: no discovery document, no /signin');
  for (const [bad, why] of [
    [{ ...good, publicUrl: 'http://pmf.example.org' }, /publicUrl/],
    [{ ...good, publicUrl: 'https://pmf.example.org/x' }, /publicUrl/],
    [{ ...good, dovecotAuth: '192.0.2.1:9999' }, /dovecotAuth/],
    [{ ...good, dovecotAuth: 'run/auth' }, /dovecotAuth/],
    [{ ...good, domains: [] }, /domains/],
    [{ ...good, domains: ['Example.ORG'] }, /domains/],
    [{ ...good, service: 'imap\tsecured' }, /service/],
    [{ ...good, timeoutMs: 10 }, /timeoutMs/],
  ] as const)
    assert.throws(() => signInConfig(bad), why, JSON.stringify(bad));
});
