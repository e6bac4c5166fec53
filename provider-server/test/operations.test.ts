// What an operator's deployment relies on, against the real server: internal
// endpoints only for internalAllowlist (a public client behind the proxy, or
// a proxy we do not trust, gets 403), wrong admin tokens throttled per
// address (a scanner's 200 tries cost it a 429 after ten, and one log line
// per kind), and the webmail's session cookie Secure when served over TLS.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { startHarness, type Harness } from './harness.js';

const TOKEN = 'pmfadmin_operations-test';
const ADMIN = { adminTokenSha256: [createHash('sha256').update(TOKEN).digest('hex')] };
const PUBLIC = '203.0.113.7';

const get = (h: Harness, path: string, headers: Record<string, string> = {}) =>
  fetch(`${h.server.httpUrl}${path}`, { headers });
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const parsed = (h: Harness) => h.logs.map((l) => JSON.parse(l) as Record<string, unknown>);

describe('internal endpoints', () => {
  let behindProxy: Harness;
  let unconfigured: Harness;
  before(async () => {
    // An instance behind a proxy on this host (the test is that proxy): X-Forwarded-For is trusted.
    behindProxy = await startHarness({}, { ...ADMIN, trustedProxies: ['127.0.0.1'] });
    // An instance whose operator did not list the proxy: forwarded requests are not taken for local ones.
    unconfigured = await startHarness({}, ADMIN);
  });
  after(async () => {
    await behindProxy.close();
    await unconfigured.close();
  });

  test('a client on the host reaches /metrics and /admin; a public one behind the proxy gets 403', async () => {
    assert.equal((await get(behindProxy, '/metrics')).status, 200);
    assert.equal((await get(behindProxy, '/admin/topics', bearer(TOKEN))).status, 200);
    assert.equal((await get(behindProxy, '/metrics', { 'x-forwarded-for': '127.0.0.1' })).status, 200);
    for (const path of ['/metrics', '/admin/topics', '/admin/topics?user=x'])
      assert.equal((await get(behindProxy, path, { 'x-forwarded-for': PUBLIC, ...bearer(TOKEN) })).status, 403, path);
    // A client's own claims in X-Forwarded-For count for nothing: the proxy's last entry is the address.
    const spoofed = { 'x-forwarded-for': `127.0.0.1, ${PUBLIC}` };
    assert.equal((await get(behindProxy, '/metrics', spoofed)).status, 403);
    // Public endpoints stay public.
    assert.equal((await get(behindProxy, '/healthz', { 'x-forwarded-for': PUBLIC })).status, 200);
    assert.equal((await get(behindProxy, '/models', { 'x-forwarded-for': PUBLIC })).status, 200);
    const metrics = await (await get(behindProxy, '/metrics')).text();
    assert.match(metrics, /^pmf_internal_refused_total 4$/m);
  });

  test('behind a proxy the instance does not trust, forwarded requests for internal endpoints get 403', async () => {
    assert.equal((await get(unconfigured, '/metrics')).status, 200);
    assert.equal((await get(unconfigured, '/metrics', { 'x-forwarded-for': PUBLIC })).status, 403);
    assert.equal((await get(unconfigured, '/metrics', { 'x-forwarded-for': '127.0.0.1' })).status, 403);
  });

  test('internalAllowlist takes addresses and CIDR ranges', async () => {
    const h = await startHarness(
      {},
      { trustedProxies: ['127.0.0.1'], internalAllowlist: ['127.0.0.1', '10.20.0.0/16', 'fd00::/8'] },
    );
    try {
      const from = (a: string) => get(h, '/metrics', { 'x-forwarded-for': a }).then((r) => r.status);
      assert.deepEqual(
        await Promise.all(['10.20.3.4', '10.21.0.1', 'fd12::1', '2001:db8::1'].map(from)),
        [200, 403, 200, 403],
      );
    } finally {
      await h.close();
    }
    await assert.rejects(startHarness({}, { internalAllowlist: ['10.0.0.0/33'] }), /internalAllowlist entry/);
  });
});

describe('admin authentication failures', () => {
  let h: Harness;
  before(async () => {
    // Every address may reach /admin here, so that several can be told apart through the trusted proxy.
    h = await startHarness({}, { ...ADMIN, trustedProxies: ['127.0.0.1'], internalAllowlist: ['0.0.0.0/0'] });
  });
  after(() => h.close());

  test('200 wrong tokens from one address: 401 ten times, then 429 even for the right token; others unaffected', async () => {
    const from = (address: string, token: string) =>
      get(h, '/admin/topics', { 'x-forwarded-for': address, ...bearer(token) });
    // The throttle counts per minute window: start early in one, so the 200 tries end in the same window.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 40_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 50));
    const statuses: number[] = [];
    for (let i = 0; i < 200; i++) statuses.push((await from('198.51.100.1', `pmfadmin_guess${i}`)).status);
    const window = Math.floor(Date.now() / 60_000);
    assert.deepEqual(statuses.slice(0, 10), Array(10).fill(401));
    assert.deepEqual(statuses.slice(10), Array(190).fill(429));
    const right = await from('198.51.100.1', TOKEN);
    if (Math.floor(Date.now() / 60_000) === window) {
      // (Unless the minute turned meanwhile, which starts a new window.)
      assert.equal(right.status, 429);
      assert.ok(Number(right.headers.get('retry-after')) >= 1);
    }
    assert.equal((await from('198.51.100.2', TOKEN)).status, 200);
    assert.equal((await from('198.51.100.2', 'pmfadmin_wrong')).status, 401);

    const metrics = await (await get(h, '/metrics', { 'x-forwarded-for': '127.0.0.1' })).text();
    assert.match(metrics, /^pmf_auth_failures_total\{endpoint="admin",reason="unauthorized"\} 11$/m);
    // One log line per kind, however many tries.
    const admin = parsed(h).filter((l) => String(l.kind).startsWith('admin_'));
    assert.deepEqual(
      admin.map((l) => [l.kind, l.level, l.address]),
      [
        ['admin_unauthorized', 'warn', '198.51.100.1'],
        ['admin_throttled', 'warn', '198.51.100.1'],
      ],
    );
  });
});

test('wrong webmail secrets are throttled the same way', async () => {
  const h = await startHarness(
    {},
    { webmailSecretSha256: [createHash('sha256').update('pmfwebmail_right').digest('hex')] },
  );
  try {
    await h.store.addUser('erin');
    const ask = (secret: string) =>
      fetch(`${h.server.httpUrl}/webmail/token`, {
        method: 'POST',
        headers: bearer(secret),
        body: JSON.stringify({ user: 'erin' }),
      }).then((r) => r.status);
    const statuses: number[] = [];
    for (let i = 0; i < 15; i++) statuses.push(await ask(`pmfwebmail_guess${i}`));
    assert.deepEqual(statuses, [...Array(10).fill(401), ...Array(5).fill(429)]);
    const window = Math.floor(Date.now() / 60_000);
    const right = await ask('pmfwebmail_right');
    if (Math.floor(Date.now() / 60_000) === window) assert.equal(right, 429);
  } finally {
    await h.close();
  }
});

test('the demo webmail cookie is Secure when the client came over TLS (through a trusted proxy), HttpOnly and SameSite always', async () => {
  const h = await startHarness({}, { trustedProxies: ['127.0.0.1'] });
  try {
    const { token } = await h.store.addUser('alice');
    const login = async (headers: Record<string, string>) => {
      const res = await fetch(`${h.server.httpUrl}/mail/login`, {
        method: 'POST',
        body: new URLSearchParams({ token }),
        headers,
        redirect: 'manual',
      });
      assert.equal(res.status, 303);
      return res.headers.get('set-cookie') ?? '';
    };
    const tls = await login({ 'x-forwarded-proto': 'https', 'x-forwarded-for': PUBLIC });
    assert.match(tls, /^pmf_mail=pmf_[^;]+; Path=\/mail; HttpOnly; SameSite=Strict; Secure$/);
    const plain = await login({});
    assert.match(plain, /HttpOnly; SameSite=Strict$/);
    const out = await fetch(`${h.server.httpUrl}/mail/logout`, {
      headers: { 'x-forwarded-proto': 'https' },
      redirect: 'manual',
    });
    assert.match(out.headers.get('set-cookie') ?? '', /Max-Age=0;.*HttpOnly; SameSite=Strict; Secure$/);
  } finally {
    await h.close();
  }
  // Only a trusted proxy may say the client used TLS.
  const direct = await startHarness();
  try {
    const { token } = await direct.store.addUser('bob');
    const res = await fetch(`${direct.server.httpUrl}/mail/login`, {
      method: 'POST',
      body: new URLSearchParams({ token }),
      headers: { 'x-forwarded-proto': 'https' },
      redirect: 'manual',
    });
    assert.doesNotMatch(res.headers.get('set-cookie') ?? '', /Secure/);
  } finally {
    await direct.close();
  }
});
