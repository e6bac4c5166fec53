// `npm run bench -- --suite models --quick` prints every row the report and
// the READMEs name, with fractions in [0, 1] (the full-size targets are in
// accuracy.slow.test.ts).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { BenchRow } from '../../bench/lib.js';
import models from '../../bench/suites/models.js';

const MODEL_ROWS = ['spamassassin', '20news', 'reuters'].flatMap((c) =>
  (c === 'spamassassin' ? ['grnb', 'lr', 'svm'] : ['mnb', 'mlr', 'svm']).map((a) => `${c}_${a}`),
);

test('the models bench suite reports every required row', async () => {
  const rows: Omit<BenchRow, 'suite'>[] = [];
  await models({ quick: true, report: (r) => rows.push(r) });
  const has = (c: string, m: string) => rows.find((r) => r.case === c && r.metric === m);
  for (const c of MODEL_ROWS) for (const m of ['accuracy', 'precision', 'recall']) assert.ok(has(c, m), `${c} ${m}`);
  for (const c of ['quantization_disagreement', 'candidates_B20_public5pct']) assert.ok(has(c, 'ratio'), c);
  for (const b of [5, 10, 20, 40])
    for (const p of [1, 2, 5, 10])
      for (const kind of ['', 'fullmodel_']) assert.ok(has(`candidates_${kind}B${b}_public${p}pct`, 'ratio'));
  for (const c of ['spamassassin_lr_fpr_at_target', 'spamassassin_lr_recall_at_target']) assert.ok(has(c, 'ratio'), c);
  const huge = has('extract_huge_message', 'time_ms');
  assert.ok(huge && huge.value > 0, 'a 20 MB message is extracted without throwing');
  for (const r of rows)
    if (r.unit === 'fraction') assert.ok(r.value >= 0 && r.value <= 1, `${r.case} ${r.metric} = ${r.value}`);
  assert.ok(has('quantization_disagreement', 'ratio')!.value <= 0.001);
});
