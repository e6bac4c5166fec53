import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { ed25519 } from '@noble/curves/ed25519.js';
import { chainHeads, headMessage, LOG_KEY_PATH, LOG_PATH, type LogEntry } from '../../protocol/package-log.js';
import { createHttpHandler } from '../src/http.js';
import { createMetrics } from '../src/metrics.js';
import { LOG_FILE, LOG_KEY_FILE, PackageLog } from '../src/package-log.js';
import { tempDir } from '../../scripts/test/temp-dir.js';

const entry = (version: number, hashByte = 'aa'): LogEntry => ({
  modelId: 'spam',
  version,
  packageSha256: hashByte.repeat(32),
  createdAt: new Date(version * 1000).toISOString(),
});

test('first open creates a 0600 log key; the log appends once per version and survives a restart', () => {
  const dir = tempDir('pmf-log-');
  const log = PackageLog.open(dir);
  const keyFile = path.join(dir, LOG_KEY_FILE);
  assert.equal(fs.statSync(keyFile).mode & 0o777, 0o600, 'log key file mode');
  assert.deepEqual(log.record([entry(1), entry(2, 'bb')]), [entry(1), entry(2, 'bb')]);
  assert.deepEqual(log.record([entry(1), entry(2, 'bb')]), [], 'already logged versions are not appended again');

  const doc = log.document();
  assert.equal(doc.size, 2);
  assert.equal(doc.head, chainHeads(doc.entries)[2]);
  assert.ok(
    ed25519.verify(Buffer.from(doc.signature, 'hex'), headMessage(2, doc.head), Buffer.from(doc.publicKey, 'hex')),
  );
  const secret = fs.readFileSync(keyFile).toString('hex');
  assert.ok(!JSON.stringify(doc).includes(secret), 'the secret key is not in the served log');
  assert.ok(!fs.readFileSync(path.join(dir, LOG_FILE), 'utf8').includes(secret));

  const again = PackageLog.open(dir);
  assert.equal(again.publicKey, log.publicKey, 'same key after a restart');
  assert.deepEqual(again.document(), doc, 'same signed head after a restart');
});

test('a published version whose package hash changed is refused, not re-logged', () => {
  const dir = tempDir('pmf-log-');
  const log = PackageLog.open(dir);
  log.record([entry(1)]);
  assert.throws(() => log.record([entry(1, 'cc')]), /spam v1: package c+ differs from the logged a+/);
  assert.equal(log.document().size, 1);
});

test('a log key readable by others is refused at start', () => {
  const dir = tempDir('pmf-log-');
  PackageLog.open(dir);
  fs.chmodSync(path.join(dir, LOG_KEY_FILE), 0o644);
  assert.throws(() => PackageLog.open(dir), /must be 600/);
});

test('the log and its key are served at well-known URLs; the log revalidates by its head', async () => {
  const dir = tempDir('pmf-log-');
  const log = PackageLog.open(dir);
  log.record([entry(1)]);
  const handler = createHttpHandler({ metrics: createMetrics(), models: () => [], packageLog: () => log.document() });
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const r = await fetch(base + LOG_PATH);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('etag'), `"${log.document().head}"`);
    assert.equal(r.headers.get('cache-control'), 'no-cache');
    assert.deepEqual(await r.json(), log.document());
    const same = await fetch(base + LOG_PATH, { headers: { 'if-none-match': r.headers.get('etag')! } });
    assert.equal(same.status, 304);
    log.record([entry(2, 'bb')]);
    const grown = await fetch(base + LOG_PATH, { headers: { 'if-none-match': r.headers.get('etag')! } });
    assert.equal(grown.status, 200, 'a new version changes the head, so the old ETag no longer matches');
    assert.equal(((await grown.json()) as { size: number }).size, 2);
    const key = await fetch(base + LOG_KEY_PATH);
    assert.deepEqual(await key.json(), { format: 'pmf-package-log/1', alg: 'ed25519', publicKey: log.publicKey });
  } finally {
    server.close();
  }
});
