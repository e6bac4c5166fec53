// The gc bench suite prints every row the report and the READMEs name, with sane
// values (sizes are exact, so they are checked against the wire layouts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { quickRows } from '../../bench/test/quick-rows.js';

test('npm run bench -- --suite gc --quick reports every required row', () => {
  const rows = quickRows<{ case: string; metric: string; value: number }>('gc');
  const value = (c: string, m: string): number => {
    const row = rows.find((r) => r.case === c && r.metric === m);
    assert.ok(row, `missing row ${c}/${m}`);
    assert.ok(Number.isFinite(row.value) && row.value > 0, `${c}/${m} = ${row.value}`);
    return row.value;
  };
  for (const c of ['cmp_T24', 'cmp_T32', 'argmax_per_input_B20', 'empwasm_cmp_T32']) {
    value(c, 'cpu_us');
    value(c, 'bytes');
  }
  value('ot_extension', 'ops_per_s');
  value('base_ot_session', 'time_ms');
  // gc_choice 11 + 4, gc_spam 32T + 11, plus 16 B of OT extension per client bit.
  assert.equal(value('cmp_T32', 'bytes'), 15 + 32 * 32 + 11 + 16 * 32);
  assert.ok(value('cmp_T32', 'bytes') <= 2500 && value('argmax_per_input_B20', 'bytes') <= 3500);
});
