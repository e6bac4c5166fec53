// The deployment examples in provider-server/deploy/ stay true to the server:
// every metric the Grafana dashboard queries is one the server exports.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { createMetrics } from '../src/metrics.js';

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
