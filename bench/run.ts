// Benchmark runner: npm run bench -- --suite NAME|all [--quick] [--json] [--rows CASE,...] [--save [DIR]]
// Each suite is bench/suites/NAME.ts exporting a default Suite. With --json
// every row is one JSON object per line; otherwise a table. --save also
// appends every row to the dated result file under bench/results (results.ts).
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { BenchRow, Suite } from './lib.js';
import { describeCommit, RESULTS_DIR, rowSaver } from './results.js';

const suitesDir = path.join(path.dirname(fileURLToPath(import.meta.url)), 'suites');
const available = fs
  .readdirSync(suitesDir)
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.slice(0, -3))
  .sort();

function usage(message?: string): never {
  if (message) console.error(message);
  console.error(
    `usage: npm run bench -- --suite ${available.join('|')}|all [--quick] [--json] [--rows CASE,...] [--save [DIR]]`,
  );
  process.exit(2);
}

const args = process.argv.slice(2);
const suiteArg = args.includes('--suite') ? args[args.indexOf('--suite') + 1] : undefined;
if (!suiteArg) usage('missing --suite');
const quick = args.includes('--quick');
const json = args.includes('--json');
const rowsArg = args.includes('--rows') ? args[args.indexOf('--rows') + 1] : undefined;
if (args.includes('--rows') && !rowsArg) usage('--rows needs a comma-separated list of row names');
const rows = rowsArg ? new Set(rowsArg.split(',')) : undefined;
const wants = (row: string): boolean => rows === undefined || rows.has(row);
// --save takes an optional directory (tests write elsewhere than bench/results).
const saveArg = args.includes('--save') ? (args[args.indexOf('--save') + 1] ?? '--') : undefined;
const saveDir = saveArg === undefined ? undefined : saveArg.startsWith('--') ? RESULTS_DIR : saveArg;
const saver = saveDir
  ? rowSaver({ dir: path.resolve(saveDir), commit: describeCommit(path.dirname(suitesDir)), quick })
  : undefined;
const names = suiteArg === 'all' ? available : suiteArg.split(',');
for (const n of names) if (!available.includes(n)) usage(`unknown suite ${n}`);

function fmt(v: number | undefined): string {
  if (v === undefined) return '';
  if (Number.isInteger(v)) return String(v);
  return Math.abs(v) >= 100 ? v.toFixed(1) : v.toPrecision(4);
}

function print(row: BenchRow): void {
  if (json) {
    process.stdout.write(`${JSON.stringify(row)}\n`);
    return;
  }
  const cols = [row.suite, row.case, row.metric, `${fmt(row.value)} ${row.unit}`];
  if (row.reference !== undefined) cols.push(`ref ${fmt(row.reference)}`);
  if (row.ratio !== undefined) cols.push(`ratio ${fmt(row.ratio)}`);
  if (row.note) cols.push(row.note);
  process.stdout.write(
    `${cols[0].padEnd(8)} ${cols[1].padEnd(28)} ${cols[2].padEnd(10)} ${cols.slice(3).join('  ')}\n`,
  );
}

let failed = false;
for (const name of names) {
  const mod = (await import(path.join(suitesDir, `${name}.ts`))) as { default: Suite };
  try {
    await mod.default({
      quick,
      wants,
      report: (row) => {
        if (!Number.isFinite(row.value)) throw new Error(`${name}/${row.case}: non-finite value`);
        if (!wants(row.case)) return;
        print({ suite: name, ...row });
        saver?.save({ suite: name, ...row });
      },
    });
  } catch (err) {
    failed = true;
    console.error(`suite ${name} failed: ${(err as Error).stack ?? err}`);
  }
}
if (saver) console.error(`bench: rows saved to ${path.relative(process.cwd(), saver.file)}`);
process.exit(failed ? 1 : 0);
