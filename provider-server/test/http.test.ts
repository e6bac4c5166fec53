import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { after, before, test } from 'node:test';
import type { HealthReport } from '../src/health.js';
import { parseRange } from '../src/http.js';
import { nativeUnmask } from '../src/server.js';
import { NONCE, startHarness, TestClient, type Harness } from './harness.js';

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(() => h.close());

const url = (p: string): string => `${h.server.httpUrl}${p}`;

test('/healthz reports ok, the served models, the workers and its checks; 200 degraded after a worker was replaced', async () => {
  const healthy = h.crypto.health;
  h.crypto.health = () => ({ workers: 1, restarts: 1, degraded: true });
  try {
    const r = await fetch(url('/healthz'));
    assert.equal(r.status, 200, 'a replaced worker still serves');
    const body = (await r.json()) as HealthReport & { models: unknown };
    assert.equal(body.status, 'degraded');
    assert.deepEqual(body.models, [{ id: 'spam', version: 2 }]);
    assert.deepEqual(body.workers, { workers: 1, restarts: 1, degraded: true });
    assert.deepEqual([body.checks.store.ok, body.checks.workers.ok], [true, true]);
  } finally {
    h.crypto.health = healthy;
  }
  await new Promise((r) => setTimeout(r, 1000)); // a probe answers the checks of the next second
  assert.equal(((await (await fetch(url('/healthz'))).json()) as HealthReport).status, 'ok');
});

test('/metrics exposes sessions, requests per type, errors per kind and crypto latency in Prometheus text', async () => {
  const { token } = await h.store.addUser('metrics-user');
  const c = await TestClient.connect(h.server.wsUrl);
  await c.request('hello', 1, { token, modelId: 'spam', modelVersion: 2, clientNonce: NONCE, keyEpoch: 0 });
  c.sendRaw(new Uint8Array([9]));
  await c.next();
  c.close();
  const r = await fetch(url('/metrics'));
  assert.equal(r.status, 200);
  assert.match(r.headers.get('content-type') ?? '', /text\/plain/);
  const text = await r.text();
  assert.match(text, /^pmf_sessions_total \d+/m);
  assert.match(text, /^pmf_sessions_active /m);
  assert.match(text, /^pmf_requests_total\{type="hello"\} [1-9]/m);
  assert.match(text, /^pmf_errors_total\{kind="malformed_frame"\} [1-9]/m);
  assert.match(text, /^pmf_crypto_seconds_bucket\{le="0.001",op="public_key"\} \d+/m);
  assert.ok(!text.includes(token), 'no token in metrics');
});

test('model packages: strong ETag, SHA-256 headers, 304, Range, If-Range and 416', async () => {
  const body = fs.readFileSync(h.model.packageFile);
  const path = `/models/spam/2`;
  const full = await fetch(url(path));
  assert.equal(full.status, 200);
  const etag = full.headers.get('etag');
  assert.equal(etag, `"${h.model.packageSha256}"`, 'strong ETag (no W/)');
  assert.equal(full.headers.get('x-content-sha256'), h.model.packageSha256);
  assert.equal(
    full.headers.get('repr-digest'),
    `sha-256=:${Buffer.from(h.model.packageSha256, 'hex').toString('base64')}:`,
  );
  assert.equal(full.headers.get('accept-ranges'), 'bytes');
  assert.deepEqual(Buffer.from(await full.arrayBuffer()), body);

  const notModified = await fetch(url(path), { headers: { 'if-none-match': etag! } });
  assert.equal(notModified.status, 304);

  const part = await fetch(url(path), { headers: { range: 'bytes=1000-1999' } });
  assert.equal(part.status, 206);
  assert.equal(part.headers.get('content-range'), `bytes 1000-1999/${body.length}`);
  assert.deepEqual(Buffer.from(await part.arrayBuffer()), body.subarray(1000, 2000));

  const tail = await fetch(url(path), { headers: { range: 'bytes=99000-', 'if-range': etag! } });
  assert.equal(tail.status, 206);
  assert.deepEqual(Buffer.from(await tail.arrayBuffer()), body.subarray(99000));

  const stale = await fetch(url(path), { headers: { range: 'bytes=5-', 'if-range': '"other"' } });
  assert.equal(stale.status, 200, 'a changed representation is sent whole');
  await stale.arrayBuffer();

  const beyond = await fetch(url(path), { headers: { range: `bytes=${body.length}-` } });
  assert.equal(beyond.status, 416);
  assert.equal(beyond.headers.get('content-range'), `bytes */${body.length}`);

  assert.equal((await fetch(url('/models/spam/1'))).status, 404);
  assert.equal((await fetch(url('/models/../etc/passwd'))).status, 404);
  const list = (await (await fetch(url('/models'))).json()) as {
    models: { id: string; version: number; sha256: string }[];
  };
  assert.deepEqual(
    list.models.map((m) => [m.id, m.version, m.sha256]),
    [['spam', 2, h.model.packageSha256]],
  );
});

test('the demo webmail is mounted under /mail and backed by the store (own messages only)', async () => {
  const { userId, token } = await h.store.addUser('webmail-user');
  const other = await h.store.addUser('webmail-other');
  await h.store.deliver(userId, 'w1@x', 'From: x@y\r\nSubject: hello there\r\n\r\n-----BEGIN PGP MESSAGE-----\r\nabc');
  await h.store.deliver(other.userId, 'w2@x', 'From: z@y\r\nSubject: not yours\r\n\r\nsecret');
  assert.match(await (await fetch(url('/mail'))).text(), /<form/i);
  const cookie = `pmf_mail=${encodeURIComponent(token)}`;
  const inbox = await (await fetch(url('/mail'), { headers: { cookie } })).text();
  assert.match(inbox, /data-message-id="w1@x"/);
  assert.match(inbox, /hello there/);
  assert.doesNotMatch(inbox, /not yours/);
  const view = await fetch(url(`/mail/m/${encodeURIComponent('w1@x')}`), { headers: { cookie } });
  assert.equal(view.status, 200);
  assert.match(await view.text(), /BEGIN PGP MESSAGE/);
  assert.equal((await fetch(url(`/mail/m/${encodeURIComponent('w2@x')}`), { headers: { cookie } })).status, 404);
  // Past the retention the body is gone and the page says so; the message stays listed.
  await h.store.pruneBodies(Date.now() + 1);
  const gone = await (await fetch(url(`/mail/m/${encodeURIComponent('w1@x')}`), { headers: { cookie } })).text();
  assert.match(gone, /no longer kept/);
  assert.doesNotMatch(gone, /BEGIN PGP MESSAGE/);
  assert.match(await (await fetch(url('/mail'), { headers: { cookie } })).text(), /data-message-id="w1@x"/);
});

test('client frames are unmasked by the native bufferutil (ws falls back to a JavaScript loop without it)', () => {
  assert.equal(nativeUnmask(), true, 'bufferutil is installed with its prebuilt binary');
  const { unmask } = createRequire(import.meta.url)('bufferutil') as { unmask(b: Buffer, m: Buffer): void };
  const data = randomBytes(8750);
  const mask = randomBytes(4);
  const out = Buffer.from(data);
  unmask(out, mask);
  assert.deepEqual(
    out,
    data.map((b, i) => b ^ mask[i % 4]),
  );
});

test('parseRange follows RFC 9110 for single ranges', () => {
  assert.deepEqual(parseRange('bytes=0-9', 100), { start: 0, end: 9 });
  assert.deepEqual(parseRange('bytes=90-200', 100), { start: 90, end: 99 });
  assert.deepEqual(parseRange('bytes=-10', 100), { start: 90, end: 99 });
  assert.equal(parseRange('bytes=100-', 100), null);
  assert.equal(parseRange('bytes=5-1', 100), null);
  assert.equal(parseRange('bytes=0-1,5-6', 100), undefined);
  assert.equal(parseRange(undefined, 100), undefined);
});
