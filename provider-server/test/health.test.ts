// /healthz checks what it reports: the real provider's store takes a write
// and a read, and its crypto workers answer, within the deadline. A full
// disk (a small tmpfs filled up) and a stopped PostgreSQL make it answer 503
// while every request would fail; it recovers with the disk.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { HealthReport } from '../src/health.js';
import { startHarness } from './harness.js';
import { fillDisk, mountsMissing, smallDisk } from './mounts.js';
import { postgresMissing, startPostgres, type TestPostgres } from './postgres.js';
import { startRealProvider, type RealProvider } from './real-provider.js';

const DEADLINE_MS = 1500;

async function health(base: string): Promise<{ status: number; body: HealthReport }> {
  const r = await fetch(`${base}/healthz`);
  return { status: r.status, body: (await r.json()) as HealthReport };
}

/** Polls /healthz (its probes are reused for a second) until `want` holds; fails after `ms`. */
async function until(base: string, want: (h: { status: number; body: HealthReport }) => boolean, ms = 8000) {
  const end = Date.now() + ms;
  for (;;) {
    const h = await health(base);
    if (want(h)) return h;
    if (Date.now() > end) assert.fail(`/healthz still answers ${h.status} ${JSON.stringify(h.body)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('a healthy provider: 200 ok, the store and the workers checked within the deadline', async () => {
  const p = await startRealProvider();
  try {
    // Failing until the crypto workers have started: a balancer sends nothing before.
    const h = await until(p.server.httpUrl, (x) => x.status === 200);
    assert.equal(h.body.status, 'ok');
    assert.equal(h.body.checks.store.ok, true);
    assert.equal(h.body.checks.workers.ok, true);
    assert.ok(h.body.checks.store.ms < DEADLINE_MS);
  } finally {
    await p.close();
  }
});

describe('a full disk', { skip: mountsMissing() }, () => {
  let p: RealProvider;
  before(async () => {
    p = await startRealProvider({ overrides: { dataDir: path.join(smallDisk(16 * 1024 * 1024), 'data') } });
  });
  after(() => p?.close());

  test('/healthz answers 503 naming the store while the disk is full, and 200 once there is room again', async () => {
    await until(p.server.httpUrl, (x) => x.status === 200);
    const free = fillDisk(p.config.dataDir);
    try {
      // What every request would meet: the store cannot write.
      await assert.rejects(p.store.addUser('nobody-fits'), /full/);
      const h = await until(p.server.httpUrl, (x) => x.status === 503);
      assert.equal(h.body.status, 'failing');
      assert.equal(h.body.checks.store.ok, false);
      assert.match(h.body.checks.store.error ?? '', /full/);
      assert.equal(h.body.checks.workers.ok, true);
    } finally {
      free();
    }
    assert.equal((await until(p.server.httpUrl, (x) => x.status === 200)).body.status, 'ok');
  });
});

describe('a stopped PostgreSQL', { skip: postgresMissing() }, () => {
  let pg: TestPostgres | undefined;
  let p: RealProvider;
  before(async () => {
    pg = await startPostgres();
    p = await startRealProvider({ overrides: { store: await pg!.database() } });
  });
  after(async () => {
    await p?.close();
    await pg?.stop();
  });

  test('/healthz answers 503 within the deadline once the database is gone', async () => {
    await until(p.server.httpUrl, (x) => x.status === 200);
    const stopping = pg;
    pg = undefined;
    await stopping!.stop();
    const t0 = Date.now();
    const h = await until(p.server.httpUrl, (x) => x.status === 503);
    assert.ok(Date.now() - t0 < DEADLINE_MS + 1500, `503 after ${Date.now() - t0} ms`);
    assert.equal(h.body.checks.store.ok, false);
    assert.ok(h.body.checks.store.error, 'the store error is named');
  });
});

test('a crypto worker that does not answer: 503 at the deadline, and no pile of checks behind it', async () => {
  const h = await startHarness({ healthTimeoutMs: 300 });
  try {
    const base = h.server.httpUrl;
    const answer = h.crypto.ping;
    h.crypto.ping = () => new Promise(() => undefined); // hung
    const hung = await until(base, (x) => x.status === 503);
    assert.equal(hung.body.checks.workers.ok, false, JSON.stringify(hung.body));
    assert.match(hung.body.checks.workers.error ?? '', /within 300 ms/);
    assert.equal(hung.body.checks.store.ok, true);
    // Checks do not pile up behind the hung one.
    assert.match(
      (await until(base, (x) => /not ended/.test(x.body.checks.workers.error ?? ''))).body.status,
      /failing/,
    );
    h.crypto.ping = answer;
    // A worker that stays hung keeps the instance out: the hung ping never ends.
    assert.equal((await health(base)).status, 503);
  } finally {
    await h.close();
  }
});
