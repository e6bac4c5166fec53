// POST /webmail/token: the webmail's server (Roundcube plugin) asks for its
// logged-in user's token with a shared secret configured by SHA-256 only.
// The issued token must open that user's account (checked with the store's
// own authenticate), never another's; issuance is rate-limited and logged
// without the token.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { startHarness, type Harness } from './harness.js';

const SECRET = 'pmfwebmail_test-secret';
const HELLOS_PER_MINUTE = 3;
let h: Harness;
let byAddress: Harness;
let off: Harness;
let carol: number;

before(async () => {
  const secrets = { webmailSecretSha256: [createHash('sha256').update(SECRET).digest('hex')] };
  h = await startHarness({ hellosPerMinute: HELLOS_PER_MINUTE }, secrets);
  byAddress = await startHarness({}, { ...secrets, lmtp: { userName: 'address' } });
  off = await startHarness();
  carol = (await h.store.addUser('carol')).userId;
  await h.store.addUser('dave');
  await byAddress.store.addUser('carol@example.org');
});
after(async () => {
  await h.close();
  await byAddress.close();
  await off.close();
});

const ask = (hh: Harness, body: string, secret: string | null = SECRET, method = 'POST') =>
  fetch(`${hh.server.httpUrl}/webmail/token`, {
    method,
    headers: { 'content-type': 'application/json', ...(secret && { authorization: `Bearer ${secret}` }) },
    body: method === 'POST' ? body : undefined,
  });

test('without the secret: 401; without configured secrets the endpoint does not exist', async () => {
  const body = JSON.stringify({ user: 'carol' });
  assert.equal((await ask(h, body, null)).status, 401);
  assert.equal((await ask(h, body, 'pmfwebmail_wrong')).status, 401);
  assert.equal((await ask(off, body)).status, 405); // as a POST to any path the server does not have
});

test('the token issued for a login opens that user’s account, the domain mapped as the LMTP stage maps it', async () => {
  const r = await ask(h, JSON.stringify({ user: 'carol@example.org' })); // lmtp.userName "localpart" (default)
  assert.equal(r.status, 200);
  assert.equal(r.headers.get('cache-control'), 'no-store');
  const { token } = (await r.json()) as { token: string };
  assert.equal(await h.store.authenticate(token), carol);
  assert.ok(!h.logs.some((l) => l.includes(token)), 'the token is never logged');
  assert.ok(h.logs.some((l) => l.includes(`webmail token issued for user #${carol}`)));

  const full = await ask(byAddress, JSON.stringify({ user: 'Carol@Example.org' })); // "address": the whole, lower-cased
  const carolThere = await byAddress.store.userId('carol@example.org');
  assert.equal(await byAddress.store.authenticate(((await full.json()) as { token: string }).token), carolThere);
  assert.equal((await ask(byAddress, JSON.stringify({ user: 'carol' }))).status, 404);
});

test('unknown users, malformed and oversized bodies, and other methods are refused', async () => {
  assert.equal((await ask(h, JSON.stringify({ user: 'nobody' }))).status, 404);
  for (const body of ['', 'carol', '{"user": 3}', '{"user": "a b"}', JSON.stringify({ user: 'x'.repeat(257) })])
    assert.equal((await ask(h, body)).status, 400, body);
  assert.equal((await ask(h, JSON.stringify({ user: 'carol', pad: 'x'.repeat(2000) }))).status, 413);
  assert.equal((await ask(h, '', SECRET, 'GET')).status, 405);
});

test('issuance is rate-limited per user (hellos per minute), another user is not held up', async () => {
  const statuses: number[] = [];
  for (let i = 0; i < HELLOS_PER_MINUTE + 1; i++)
    statuses.push((await ask(h, JSON.stringify({ user: 'dave' }))).status);
  assert.deepEqual(statuses, [...Array(HELLOS_PER_MINUTE).fill(200), 429]);
  assert.ok(h.logs.some((l) => /webmail token refused \(user #\d+: rate limited\)/.test(l)));
  const metrics = await (await fetch(`${h.server.httpUrl}/metrics`)).text();
  assert.match(metrics, /pmf_webmail_tokens_total\{outcome="rate_limited"\} 1/);
});
