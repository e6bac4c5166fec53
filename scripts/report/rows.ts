// Where the report's numbers come from: the bench suites run now (one child
// process per suite, so one failing suite leaves the others' rows), or rows
// saved earlier as JSON lines: one file of `npm run bench -- --json` output,
// or the dated result files of bench/results (`npm run bench -- --save`), the
// newest row of each suite, case and metric.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { BenchRow } from '../../bench/lib.js';

export type { BenchRow };

const SUITES = ['wasm', 'he', 'gc', 'models', 'spam', 'topics', 'search'];

export interface Rows {
  rows: BenchRow[];
  /** Suites that exited with an error; their rows up to the failure are kept. */
  failed: string[];
}

/** Parses JSON lines, skipping lines that are not bench rows (npm's banner, warnings). */
export function parseRows(text: string): BenchRow[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as BenchRow)
    .filter((r) => typeof r.suite === 'string' && typeof r.case === 'string' && Number.isFinite(r.value));
}

/** The result files of a directory, oldest first (their names start with the date). */
export function resultFiles(dir: string): string[] {
  return fs
    .readdirSync(dir)
    .filter((f) => f.endsWith('.jsonl'))
    .sort()
    .map((f) => path.join(dir, f));
}

/** Rows of one file, or of every result file in a directory with later files overriding earlier rows. */
export function readRows(from: string): Rows {
  if (!fs.statSync(from).isDirectory()) return { rows: parseRows(fs.readFileSync(from, 'utf8')), failed: [] };
  const newest = new Map<string, BenchRow>();
  for (const file of resultFiles(from))
    for (const row of parseRows(fs.readFileSync(file, 'utf8'))) {
      const key = `${row.suite}\0${row.case}\0${row.metric}`;
      newest.delete(key); // keep the order rows were last measured in
      newest.set(key, row);
    }
  return { rows: [...newest.values()], failed: [] };
}

/** Runs the report's suites; with `save`, each also appends its rows to bench/results. */
export function runSuites(root: string, full: boolean, save = false): Rows {
  const result: Rows = { rows: [], failed: [] };
  for (const suite of SUITES) {
    console.error(`report: running bench suite ${suite}${full ? '' : ' (quick)'}`);
    const res = spawnSync(
      process.execPath,
      [
        '--import',
        'tsx',
        path.join(root, 'bench/run.ts'),
        '--suite',
        suite,
        '--json',
        ...(full ? [] : ['--quick']),
        ...(save ? ['--save'] : []),
      ],
      { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 },
    );
    result.rows.push(...parseRows(res.stdout));
    if (res.status !== 0) result.failed.push(suite);
  }
  return result;
}
