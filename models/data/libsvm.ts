// Features -> LIBSVM lines ("<label> <row>:<count> ..."), the exchange format
// between the TypeScript extractor and the scikit-learn training.
import type { Features } from '../features/extract.js';

export function libsvmLine(label: number, f: Features): string {
  let s = String(label);
  for (let i = 0; i < f.rows.length; i++) s += ` ${f.rows[i]}:${f.counts[i]}`;
  return s;
}

export function parseLibsvmLine(line: string): { label: number; features: Features } {
  const [label, ...pairs] = line.trim().split(/\s+/);
  const rows = new Uint32Array(pairs.length);
  const counts = new Uint32Array(pairs.length);
  pairs.forEach((p, i) => {
    const [r, c] = p.split(':');
    rows[i] = Number(r);
    counts[i] = Number(c);
  });
  return { label: Number(label), features: { rows, counts } };
}
