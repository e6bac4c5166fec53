// The deployment examples in provider-server/deploy/ stay true to the server:
// every metric the Grafana dashboard queries is one the server exports, and
// HAProxy accepts the example configuration the scale-out test runs.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { createMetrics } from '../src/metrics.js';
import { haproxyConfig } from './cluster.js';

test('the Grafana dashboard queries only metrics the server exports', async () => {
  const dashboard = JSON.parse(fs.readFileSync('provider-server/deploy/grafana-dashboard.json', 'utf8'));
  const exprs: string[] = dashboard.panels.flatMap((p: { targets: { expr: string }[] }) =>
    p.targets.map((t) => t.expr),
  );
  const queried = new Set(exprs.flatMap((e) => e.match(/\bpmf_[a-z0-9_]+/g) ?? []));
  const metrics = await createMetrics().registry.getMetricsAsJSON();
  const exported = new Set(
    metrics.flatMap((m) =>
      m.type === ('histogram' as never) ? [`${m.name}_bucket`, `${m.name}_sum`, `${m.name}_count`] : [m.name],
    ),
  );
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
