// The accuracy table: one line per algorithm and corpus from the models
// suite, quantized (what the private protocol computes) beside float.
import { MODEL_CASE, modelName } from './figures.js';
import type { BenchRow } from './rows.js';

export const ACCURACY_COLUMNS = ['model', 'accuracy', 'precision', 'recall', 'float accuracy', 'float ≠ quantized'];

export type AccuracyLine = Record<string, string | number>;

export function accuracyTable(rows: BenchRow[]): AccuracyLine[] {
  const models = rows.filter((r) => r.suite === 'models');
  const value = (c: string, metric: string) => models.find((r) => r.case === c && r.metric === metric)?.value;
  const cases = [...new Set(models.map((r) => r.case).filter((c) => MODEL_CASE.test(c)))];
  return cases.map((c) => {
    const cells: (number | undefined)[] = [
      value(c, 'accuracy'),
      value(c, 'precision'),
      value(c, 'recall'),
      value(`${c}_float`, 'accuracy'),
      value(`${c}_disagreement`, 'ratio'),
    ];
    const line: AccuracyLine = { model: modelName(c) };
    ACCURACY_COLUMNS.slice(1).forEach((col, i) => {
      line[col] = cells[i] === undefined ? '' : `${(cells[i] * 100).toFixed(1)} %`;
    });
    return line;
  });
}
