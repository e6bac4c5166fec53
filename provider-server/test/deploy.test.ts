// The deployment examples in provider-server/deploy/ stay true to the server:
// every metric the Grafana dashboard queries is one the server exports,
// HAProxy accepts the example configuration the scale-out test runs, and,
// running it over TLS, forwards only the public API and says the client
// used TLS.
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { freePort, haproxyConfig, waitFor } from './cluster.js';
import { exportedMetrics } from './exported-metrics.js';
import { tempDir } from '../../scripts/test/temp-dir.js';

test('the Grafana dashboard queries only metrics the server exports', async () => {
  const dashboard = JSON.parse(fs.readFileSync('provider-server/deploy/grafana-dashboard.json', 'utf8'));
  const exprs: string[] = dashboard.panels.flatMap((p: { targets: { expr: string }[] }) =>
    p.targets.map((t) => t.expr),
  );
  const queried = new Set(exprs.flatMap((e) => e.match(/\bpmf_[a-z0-9_]+/g) ?? []));
  const exported = await exportedMetrics();
  assert.ok(queried.size >= 8, `only ${queried.size} metrics queried`);
  for (const name of queried)
    assert.ok(exported.has(name), `the dashboard queries ${name}, which the server does not export`);
});

test('the HAProxy example is a valid configuration (haproxy -c, loopback ports instead of TLS)', (t) => {
  if (!fs.existsSync('/usr/sbin/haproxy')) return t.skip('haproxy is not installed (scripts/setup.sh installs it)');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-haproxy-'));
  try {
    const cfg = path.join(dir, 'haproxy.cfg');
    fs.writeFileSync(cfg, haproxyConfig(18080, [18787, 18788]));
    const res = spawnSync('/usr/sbin/haproxy', ['-c', '-f', cfg], { encoding: 'utf8' });
    assert.equal(res.status, 0, res.stderr + res.stdout);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});

/** A self-signed certificate and key in one PEM file, as HAProxy's `crt` takes them. */
function selfSignedPem(dir: string): string {
  const key = path.join(dir, 'key.pem');
  const cert = path.join(dir, 'cert.pem');
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-subj', '/CN=localhost', '-days', '1'].concat([
      '-keyout',
      key,
      '-out',
      cert,
    ]),
    { stdio: 'ignore' },
  );
  const pem = path.join(dir, 'pmf.pem');
  fs.writeFileSync(pem, fs.readFileSync(cert, 'utf8') + fs.readFileSync(key, 'utf8'));
  return pem;
}

/** A request over TLS to HAProxy (its certificate is self-signed). */
function request(port: number, method: string, p: string, headers: Record<string, string> = {}): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      { host: '127.0.0.1', port, method, path: p, headers, rejectUnauthorized: false },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end();
  });
}

test('HAProxy as shipped forwards only the public API, and tells the instances the client used TLS', async (t) => {
  if (!fs.existsSync('/usr/sbin/haproxy')) return t.skip('haproxy is not installed (scripts/setup.sh installs it)');
  const dir = tempDir('pmf-haproxy-');
  // An instance stand-in that records what reaches it.
  const seen: { path: string; proto?: string; forwardedFor?: string }[] = [];
  const backend = http.createServer((req, res) => {
    seen.push({
      path: req.url ?? '',
      proto: req.headers['x-forwarded-proto'] as string | undefined,
      forwardedFor: req.headers['x-forwarded-for'] as string | undefined,
    });
    res.end('ok');
  });
  await new Promise<void>((r) => backend.listen(0, '127.0.0.1', r));
  const port = await freePort();
  const cfg = path.join(dir, 'haproxy.cfg');
  fs.writeFileSync(cfg, haproxyConfig(port, [(backend.address() as AddressInfo).port], selfSignedPem(dir)));
  const haproxy = spawn('/usr/sbin/haproxy', ['-db', '-f', cfg], { stdio: 'ignore' });
  const exited = new Promise((r) => haproxy.once('exit', r));
  try {
    await waitFor('HAProxy to forward /healthz', 30_000, async () =>
      (await request(port, 'GET', '/healthz')) === 200 ? true : undefined,
    );
    seen.length = 0;
    const publicApi = [
      ['GET', '/healthz'],
      ['GET', '/models'],
      ['GET', '/models/spam/3'],
      ['GET', '/models/topics/1/candidates'],
      ['GET', '/blocklists'],
      ['GET', '/blocklists/phish/2/delta'],
      ['GET', '/.well-known/pmf-package-log.json'],
      ['POST', '/webmail/token'],
      ['GET', '/session'],
    ];
    for (const [method, p] of publicApi) assert.equal(await request(port, method, p), 200, `${method} ${p}`);
    assert.deepEqual(
      seen.map((r) => r.path),
      publicApi.map(([, p]) => p),
    );
    const internal = [
      '/metrics',
      '/metrics?x=1',
      '/admin/topics',
      '/admin/topics?user=a',
      '/mail',
      '/mail/m/1',
      '/mail/login',
      '/',
    ];
    for (const p of internal) assert.equal(await request(port, 'GET', p), 404, p);
    assert.equal(seen.length, publicApi.length, 'no internal path reached an instance');
    // The client's own X-Forwarded-Proto is replaced; its X-Forwarded-For claims stay in front of the real address.
    await request(port, 'GET', '/healthz', { 'x-forwarded-proto': 'http', 'x-forwarded-for': '6.6.6.6' });
    const last = seen.at(-1)!;
    assert.equal(last.proto, 'https');
    assert.equal(last.forwardedFor, '6.6.6.6, 127.0.0.1');
    assert.ok(seen.every((r) => r.proto === 'https'));
  } finally {
    haproxy.kill('SIGTERM');
    await exited;
    backend.close();
  }
});
