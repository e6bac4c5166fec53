// A client that abuses the connection itself rather than the protocol: never
// reads, never says hello, opens many sockets, pings forever, comes from a
// foreign web page, or resynchronises a whole mailbox. Each must cost the
// provider a bounded amount and never lock other users out.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import WebSocket from 'ws';
import { prefixOf } from '../src/connection-gate.js';
import { markClassified, NONCE, startHarness, TestClient, type Harness } from './harness.js';

let h: Harness;
let token: string;
let userId: number;

before(async () => {
  h = await startHarness({
    maxSendBufferBytes: 256 * 1024,
    helloTimeoutMs: 300,
    connectionsPerAddress: 6,
    maxUnauthenticated: 4,
    pingsPerMinute: 1_000_000,
    requestsPerMinute: 10_000,
  });
  ({ token, userId } = await h.store.addUser('alice'));
});
after(() => h.close());

const hello = (c: TestClient) =>
  c.request('hello', 1, { token, modelId: 'spam', modelVersion: 2, clientNonce: NONCE, keyEpoch: 0 });

/** The HTTP status the server refuses an upgrade with, or 101 when it accepts. */
function upgradeStatus(options?: WebSocket.ClientOptions, url = h.server.wsUrl): Promise<number> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url, options);
    ws.once('open', () => {
      ws.close();
      resolve(101);
    });
    ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
    ws.once('error', reject);
  });
}

async function waitFor(cond: () => boolean, timeoutMs = 5000): Promise<void> {
  const start = Date.now();
  while (!cond()) {
    if (Date.now() - start > timeoutMs) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 10));
  }
}

test('a client that never reads its pongs is dropped once its send buffer is full', async () => {
  const c = await TestClient.connect(h.server.wsUrl);
  assert.equal((await hello(c)).name, 'welcome');
  c.ws.pause(); // stop reading: pongs pile up in the kernel, then in the server
  let sent = 0;
  while (!c.closed && sent < 3_000_000) {
    for (let i = 0; i < 5000; i++) c.send('ping', 2, { nonce: i });
    sent += 5000;
    await new Promise((r) => setImmediate(r));
    if (sent % 100_000 === 0) await new Promise((r) => setTimeout(r, 20));
  }
  c.ws.resume();
  await c.waitClosed();
  assert.ok(sent < 3_000_000, 'the server kept queueing pongs for a client that does not read');
  await waitFor(() => h.server.sessions.size === 0);
});

test('a socket that never says hello is closed at the hello deadline, pings or not', async () => {
  const c = await TestClient.connect(h.server.wsUrl);
  const pinger = setInterval(() => c.ws.readyState === c.ws.OPEN && c.send('ping', 3, { nonce: 1 }), 50);
  try {
    const closed = await c.waitClosed(3000);
    assert.equal(closed.code, 1008);
  } finally {
    clearInterval(pinger);
  }
});

test('sockets without hello are capped, so they cannot fill the server', async () => {
  const idle = await Promise.all([0, 1, 2, 3].map(() => TestClient.connect(h.server.wsUrl)));
  assert.equal(await upgradeStatus(), 503);
  // One of them authenticates: a slot frees up for the next newcomer.
  assert.equal((await hello(idle[0])).name, 'welcome');
  assert.equal(await upgradeStatus(), 101);
  for (const c of idle) c.close();
  await waitFor(() => h.server.sessions.size === 0);
});

test('open connections per address are capped', async () => {
  const open: TestClient[] = [];
  for (let i = 0; i < 6; i++) {
    const c = await TestClient.connect(h.server.wsUrl);
    assert.equal((await hello(c)).name, 'welcome');
    open.push(c);
  }
  assert.equal(await upgradeStatus(), 429);
  // The server trusts no proxy here: a client cannot pick another address by header.
  assert.equal(await upgradeStatus({ headers: { 'x-forwarded-for': '203.0.113.77' } }), 429);
  open.pop()!.close();
  await waitFor(() => h.server.sessions.size === 5);
  assert.equal(await upgradeStatus(), 101);
  for (const c of open) c.close();
  await waitFor(() => h.server.sessions.size === 0);
});

test('browsers may open sessions only from allowed origins; native clients send none', async () => {
  assert.equal(await upgradeStatus({ origin: 'https://evil.example' }), 403);
  assert.equal(await upgradeStatus({ origin: 'moz-extension://0b5a9d3e-1c2f-4e55-9d0e-2a1f3c4b5d6e' }), 101);
  assert.equal(await upgradeStatus({ origin: 'chrome-extension://abcdefghijklmnop' }), 101);
  assert.equal(await upgradeStatus(), 101);
  await waitFor(() => h.server.sessions.size === 0);
});

test('resynchronising a mailbox (already classified, unknown ids) does not close the session', async () => {
  for (let i = 0; i < 20; i++) {
    await h.store.deliver(userId, `done-${i}`, 'Subject: x\r\n\r\ny');
    await markClassified(h.store, userId, `done-${i}`);
  }
  const c = await TestClient.connect(h.server.wsUrl);
  assert.equal((await hello(c)).name, 'welcome');
  const ask = (messageId: string, requestId: number) =>
    c.request('spam_request', requestId, {
      messageId,
      lwe: new Uint8Array(8),
      choices: new Uint8Array(8),
    });
  for (let i = 0; i < 20; i++) {
    const a = await ask(`done-${i}`, 10 + i);
    assert.ok(a.name === 'error' && a.code === 'already_classified');
    const b = await ask(`never-${i}`, 100 + i);
    assert.ok(b.name === 'error' && b.code === 'unknown_message');
  }
  const pong = await c.request('ping', 7, { nonce: 7 });
  assert.equal(pong.name, 'pong');
  c.close();
});

test('pings are rate limited per session', async () => {
  const small = await startHarness({ pingsPerMinute: 5 });
  try {
    const c = await TestClient.connect(small.server.wsUrl);
    for (let i = 0; i < 5; i++) assert.equal((await c.request('ping', i + 1, { nonce: i })).name, 'pong');
    const m = await c.request('ping', 9, { nonce: 9 });
    assert.ok(m.name === 'error' && m.code === 'rate_limited');
    c.close();
  } finally {
    await small.close();
  }
});

test('new connections per address per minute and hellos per user per minute are limited', async () => {
  const tight = await startHarness({ connectionsPerMinutePerAddress: 3, hellosPerMinute: 2 });
  try {
    const t = (await tight.store.addUser('carol')).token;
    const hello2 = (c: TestClient) =>
      c.request('hello', 1, { token: t, modelId: 'spam', modelVersion: 2, clientNonce: NONCE, keyEpoch: 0 });
    const a = await TestClient.connect(tight.server.wsUrl);
    assert.equal((await hello2(a)).name, 'welcome');
    a.close();
    const b = await TestClient.connect(tight.server.wsUrl);
    assert.equal((await hello2(b)).name, 'welcome');
    b.close();
    // The third hello this minute is refused and ends its session.
    const c = await TestClient.connect(tight.server.wsUrl);
    const refused = await hello2(c);
    assert.ok(refused.name === 'error' && refused.code === 'rate_limited');
    assert.equal((await c.waitClosed()).code, 1008);
    // That was the third connection from this address this minute: the fourth is refused.
    await assert.rejects(TestClient.connect(tight.server.wsUrl), /429/);
  } finally {
    await tight.close();
  }
});

test('a logged-in webmail page cannot mint provider tokens without limit', async () => {
  const tight = await startHarness({ hellosPerMinute: 3 });
  try {
    const t = (await tight.store.addUser('dave')).token;
    const login = await fetch(`${tight.server.httpUrl}/mail/login`, {
      method: 'POST',
      body: new URLSearchParams({ token: t }),
      redirect: 'manual',
    });
    const cookie = (login.headers.get('set-cookie') ?? '').split(';')[0];
    const issue = () => fetch(`${tight.server.httpUrl}/mail/extension-token`, { method: 'POST', headers: { cookie } });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await issue()).status);
    assert.deepEqual(statuses, [200, 200, 200, 429, 429]);
  } finally {
    await tight.close();
  }
});

test('networks are /24 (IPv4, mapped too) and /64 (IPv6)', () => {
  assert.equal(prefixOf('203.0.113.77'), '203.0.113.0/24');
  assert.equal(prefixOf('::ffff:203.0.113.77'), '203.0.113.0/24');
  assert.equal(prefixOf('2001:db8:1:2:3:4:5:6'), '2001:db8:1:2::/64');
  assert.equal(prefixOf('2001:0db8:0001:0002::9'), '2001:db8:1:2::/64');
  assert.equal(prefixOf('2001:db8::1'), '2001:db8:0:0::/64');
  assert.equal(prefixOf('::1'), '0:0:0:0::/64');
});

describe('sockets waiting for hello', () => {
  let w: Harness;
  let real: string;
  before(async () => {
    w = await startHarness({
      maxUnauthenticated: 8,
      unauthenticatedPerPrefix: 4,
      helloTimeoutMs: 60_000, // the attacker's sockets stay as long as it likes
      connectionsPerMinutePerPrefix: 1000,
    });
    real = (await w.store.addUser('real-user')).token;
  });
  after(() => w.close());

  /** A socket from `address` (on loopback: any 127.x.y.z) that never says hello, or the status it was refused with. */
  const idle = (address: string) =>
    TestClient.connect(w.server.wsUrl, { localAddress: address }).catch(
      (e: Error) => Number(/\d{3}/.exec(e.message)?.[0]) || Promise.reject(e),
    );

  test('from flooding networks never lock out a user from another network', async () => {
    const attacker: (TestClient | number)[] = [];
    // Four networks, eight addresses each: more than all the waiting places, again and again.
    for (let round = 0; round < 3; round++)
      for (let net = 1; net <= 4; net++)
        for (let host = 1; host <= 8; host++) attacker.push(await idle(`127.${net}.0.${host}`));
    for (let i = 0; i < 20; i++) {
      const c = await TestClient.connect(w.server.wsUrl, { localAddress: '127.200.0.1' });
      const r = await c.request('hello', 1, {
        token: real,
        modelId: 'spam',
        modelVersion: 2,
        clientNonce: NONCE,
        keyEpoch: 0,
      });
      assert.equal(r.name, 'welcome', `try ${i}: ${JSON.stringify(r)}`);
      c.close();
    }
    assert.ok(
      attacker.some((a) => a === 429),
      'each network holds at most unauthenticatedPerPrefix',
    );
    // The flood still holds what it may: never more than the waiting budget.
    const open = attacker.filter((a): a is TestClient => typeof a !== 'number' && !a.closed);
    assert.ok(open.length <= 8, `${open.length} waiting sockets open`);
    for (const a of open) a.close();
  });

  test('one network holds at most unauthenticatedPerPrefix of them, whichever addresses it uses', async () => {
    const held = await Promise.all([1, 2, 3, 4].map((host) => idle(`127.9.0.${host}`)));
    assert.ok(held.every((c) => typeof c !== 'number'));
    assert.equal(await upgradeStatus({ localAddress: '127.9.0.99' }, w.server.wsUrl), 429);
    assert.equal(await upgradeStatus({ localAddress: '127.10.0.1' }, w.server.wsUrl), 101, 'another network gets in');
    for (const c of held) (c as TestClient).close();
  });
});

test('new connections per network per minute are limited, whichever addresses of it they come from', async () => {
  const tight = await startHarness({ connectionsPerMinutePerPrefix: 3 });
  try {
    const url = tight.server.wsUrl;
    for (const host of [1, 2, 3]) assert.equal(await upgradeStatus({ localAddress: `127.20.0.${host}` }, url), 101);
    assert.equal(await upgradeStatus({ localAddress: '127.20.0.4' }, url), 429);
    assert.equal(await upgradeStatus({ localAddress: '127.21.0.1' }, url), 101, 'another network is counted apart');
  } finally {
    await tight.close();
  }
});
