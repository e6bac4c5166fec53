import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import type { AddressInfo } from 'node:net';
import { createHttpHandler } from '../../provider-server/src/http.js';
import { createMetrics } from '../../provider-server/src/metrics.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { PackageLog } from '../../provider-server/src/package-log.js';
import { ensurePackage, type VerifiedPackage } from '../core/download.js';
import { DirectoryStorage, FileTrustStore } from '../node/node-storage.js';
import { PackageLogAlert, PackageLogVerifier } from '../core/package-log.js';
import { testPackage } from './package-fixture.js';

let dir: string;
let server: http.Server;
let base: string;
let pkg: Buffer;
let sha: string;
let log: PackageLog;
let requests: { range?: string; ifRange?: string }[] = [];

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-dl-'));
  const body = new Uint8Array(300_000).map((_, i) => (i * 7919) & 0xff);
  const { header, bytes } = testPackage(body);
  pkg = Buffer.from(bytes);
  sha = createHash('sha256').update(pkg).digest('hex');
  const file = path.join(dir, 'spam-v1.pmf');
  fs.writeFileSync(file, pkg);
  const model = {
    id: 'spam',
    version: 1,
    packageFile: file,
    packageBytes: pkg.length,
    packageSha256: sha,
    params: header.params,
    providerSeed: header.providerSeed,
    keyFile: '',
  };
  log = PackageLog.open(path.join(dir, 'provider'));
  const handler = createHttpHandler({
    metrics: createMetrics(),
    models: () => [model],
    packageLog: log,
  });
  server = http.createServer((req, res) => {
    if (req.url?.startsWith('/models/'))
      requests.push({ range: req.headers.range, ifRange: req.headers['if-range'] as string | undefined });
    handler(req, res);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
after(() => {
  server.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A fetch whose package response body breaks after `limit` bytes (a dropped connection). */
function cuttingFetch(limit: number): typeof fetch {
  return async (input, init) => {
    const r = await fetch(input, init);
    if (!String(input).includes('/models/') || !r.body) return r;
    const reader = r.body.getReader();
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      async pull(ctrl) {
        const { done, value } = await reader.read();
        if (done) return ctrl.close();
        if (sent + value.length > limit) {
          ctrl.enqueue(value.subarray(0, limit - sent));
          sent = limit;
          ctrl.error(new Error('connection reset'));
          return;
        }
        sent += value.length;
        ctrl.enqueue(value);
      },
    });
    return new Response(stream, { status: r.status, headers: r.headers });
  };
}

test('an interrupted download resumes with Range/If-Range and is verified', async () => {
  requests = [];
  const storage = new DirectoryStorage(path.join(dir, 'store1'));
  const progress: number[] = [];
  await assert.rejects(
    ensurePackage({ baseUrl: base, modelId: 'spam', storage, fetch: cuttingFetch(100_000) }),
    /connection reset/,
  );
  const partial = await storage.getPartial('spam-v1');
  assert.equal(partial?.bytes.length, 100_000);
  const p = await ensurePackage({ baseUrl: base, modelId: 'spam', storage, onProgress: (r) => progress.push(r) });
  assert.equal(p.sha256, sha);
  assert.equal(p.header.providerSeed, '11'.repeat(32));
  assert.deepEqual(requests.at(-1), { range: 'bytes=100000-', ifRange: `"${sha}"` });
  assert.equal(progress[0], 100_000, 'progress starts at the resumed offset');
  assert.equal(progress.at(-1), pkg.length);
  assert.equal(await storage.getPartial('spam-v1'), undefined);
  // stored: no further package request
  const n = requests.length;
  await ensurePackage({ baseUrl: base, modelId: 'spam', storage });
  assert.equal(requests.length, n);
});

test('a package that does not match the expected hash is refused and discarded', async () => {
  const storage = new DirectoryStorage(path.join(dir, 'store2'));
  await assert.rejects(
    ensurePackage({ baseUrl: base, modelId: 'spam', storage, expectSha256: 'ab'.repeat(32) }),
    /does not match the expected/,
  );
  assert.equal(await storage.get('spam-v1'), undefined);
  assert.equal(await storage.getPartial('spam-v1'), undefined);
  // a corrupted partial (bit flip in stored bytes) is caught at the end and dropped
  const s3 = new DirectoryStorage(path.join(dir, 'store3'));
  await assert.rejects(ensurePackage({ baseUrl: base, modelId: 'spam', storage: s3, fetch: cuttingFetch(5000) }));
  const f = path.join(dir, 'store3', 'spam-v1.part');
  const bytes = fs.readFileSync(f);
  bytes[4000] ^= 0xff;
  fs.writeFileSync(f, bytes);
  await assert.rejects(ensurePackage({ baseUrl: base, modelId: 'spam', storage: s3 }), /SHA-256/);
  assert.equal(
    (await ensurePackage({ baseUrl: base, modelId: 'spam', storage: s3 })).sha256,
    sha,
    'the retry starts over',
  );
});

test('unknown models are reported clearly', async () => {
  await assert.rejects(
    ensurePackage({ baseUrl: base, modelId: 'topics', storage: new DirectoryStorage(path.join(dir, 's4')) }),
    /not offered/,
  );
});

test('with logCheck, a package is used only once the signed package log lists it, and the head is recorded', async () => {
  const trust = new FileTrustStore(path.join(dir, 'trust'));
  const verifier = new PackageLogVerifier({ baseUrl: base, trust });
  const opts = {
    baseUrl: base,
    modelId: 'spam',
    storage: new DirectoryStorage(path.join(dir, 's5')),
    logCheck: (p: VerifiedPackage) => verifier.checkPackage(p),
  };
  await assert.rejects(ensurePackage(opts), (e) => e instanceof PackageLogAlert && e.kind === 'not_in_log');
  log.record([{ modelId: 'spam', version: 1, packageSha256: sha, createdAt: new Date(0).toISOString() }]);
  assert.equal((await ensurePackage(opts)).sha256, sha);
  const recorded = await trust.get(new URL(base).origin);
  assert.deepEqual(recorded && { ...recorded, checkedAt: 0 }, {
    logKey: log.vkey,
    keySource: 'first-use',
    size: 1,
    root: bytesToHex(log.checkpoint.root),
    checkedAt: 0,
    cosigners: [],
  });
});
