// Where the report's numbers come from: the bench suites run now (one child
// process per suite, so one failing suite leaves the others' rows), or rows
// saved earlier as JSON lines (`npm run bench -- --json` output).
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

export function readRows(file: string): Rows {
  return { rows: parseRows(fs.readFileSync(file, 'utf8')), failed: [] };
}

export function runSuites(root: string, full: boolean): Rows {
  const result: Rows = { rows: [], failed: [] };
  for (const suite of SUITES) {
    console.error(`report: running bench suite ${suite}${full ? '' : ' (quick)'}`);
    const res = spawnSync(
      process.execPath,
      ['--import', 'tsx', path.join(root, 'bench/run.ts'), '--suite', suite, '--json', ...(full ? [] : ['--quick'])],
      { cwd: root, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'], maxBuffer: 64 << 20 },
    );
    result.rows.push(...parseRows(res.stdout));
    if (res.status !== 0) result.failed.push(suite);
  }
  return result;
}
