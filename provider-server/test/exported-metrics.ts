// The metrics the server exports, as monitoring queries name them (a
// histogram as its _bucket, _sum and _count series), with their label
// names: what the deploy files' queries are checked against.
import { createMetrics } from '../src/metrics.js';

export async function exportedMetrics(): Promise<Map<string, string[]>> {
  const metrics = createMetrics();
  const exported = new Map<string, string[]>();
  for (const m of await metrics.registry.getMetricsAsJSON()) {
    const labels = [
      ...((metrics.registry.getSingleMetric(m.name) as unknown as { labelNames?: string[] }).labelNames ?? []),
    ];
    if (m.type === ('histogram' as never)) {
      exported.set(`${m.name}_bucket`, [...labels, 'le']);
      exported.set(`${m.name}_sum`, labels);
      exported.set(`${m.name}_count`, labels);
    } else exported.set(m.name, labels);
  }
  return exported;
}
