// The `load` bench prints each of its rows (names kept stable for scripts): a real
// provider process, HAProxy in front of one and two instances. Slow suite:
// even --quick sets up real sessions (base OTs) for tens of seconds.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { quickRows } from './quick-rows.js';
import { postgresMissing } from '../../provider-server/test/postgres.js';

const ROWS = [
  'classifications_per_s_200',
  'p99_ms_200',
  'sessions_per_s',
  'victim_p99_ms_setup_storm',
  'rss_mb_200',
  'scaleout_2_instances_ratio',
  'rss_mb_otpool_300',
  // on PostgreSQL (Debian's binaries; scripts/setup.sh installs them)
  ...(postgresMissing() ? [] : ['classifications_per_s_200_postgres', 'scaleout_2_instances_ratio_postgres']),
];

test('--suite load --quick prints every row with a positive value', () => {
  const rows = quickRows<{ case: string; value: number }>('load');
  assert.deepEqual(rows.map((r) => r.case).sort(), [...ROWS].sort());
  for (const r of rows) assert.ok(Number.isFinite(r.value) && r.value > 0, `${r.case}: ${r.value}`);
});
