// npm run report [-- --full] [--save] [--from ROWS.jsonl|bench/results] [--out DIR]
// Builds the evaluation report: DIR/index.html (default report/) with one SVG
// and one CSV per figure under DIR/figures/, and the bench rows it was built
// from in DIR/rows.jsonl. --from bench/results builds it from the dated result
// files the READMEs cite (the newest row of each). Without --from it runs
// every bench suite (quick sizes unless --full); --save keeps those rows in
// bench/results too.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ACCURACY_COLUMNS, accuracyTable } from './report/accuracy.js';
import { FIGURES, NOT_BENCHED } from './report/figures.js';
import { describeMachine } from './report/machine.js';
import { pageHtml, type Rendered } from './report/page.js';
import { POINT_COLUMNS, toCsv, toSvg, vegaLiteSpec } from './report/render.js';
import { readRows, resultFiles, runSuites } from './report/rows.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const option = (name: string) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
const full = args.includes('--full');
const from = option('--from');
const out = path.resolve(option('--out') ?? path.join(root, 'report'));

const save = args.includes('--save');
const { rows, failed } = from ? readRows(from) : runSuites(root, full, save);
if (!rows.length) {
  console.error('report: no bench rows to plot');
  process.exit(1);
}

const figuresDir = path.join(out, 'figures');
fs.rmSync(figuresDir, { recursive: true, force: true });
fs.mkdirSync(figuresDir, { recursive: true });
fs.writeFileSync(path.join(out, 'rows.jsonl'), rows.map((r) => JSON.stringify(r)).join('\n') + '\n');

const rendered: Rendered[] = [];
const missing: string[] = [];
for (const figure of FIGURES) {
  const points = figure.points(rows);
  if (!points.length) {
    missing.push(`${figure.title} (Pretzel: ${figure.pretzel})`);
    continue;
  }
  fs.writeFileSync(path.join(figuresDir, `${figure.id}.svg`), await toSvg(vegaLiteSpec(figure, points)));
  fs.writeFileSync(path.join(figuresDir, `${figure.id}.csv`), toCsv(POINT_COLUMNS, points));
  rendered.push({ figure, points });
}

const accuracy = accuracyTable(rows);
if (accuracy.length) fs.writeFileSync(path.join(figuresDir, 'accuracy-table.csv'), toCsv(ACCURACY_COLUMNS, accuracy));

/** Where saved rows say they were measured (bench/results rows carry it). */
function measuredOn(): string {
  const machines = [...new Set(rows.map((r) => (r as { machine?: string }).machine).filter(Boolean))];
  return machines.length ? ` Measured on ${machines.join('; ')}; the machine below built the report.` : '';
}

function fromDirectory(dir: string): string {
  const files = resultFiles(dir).map((f) => path.basename(f));
  const name = path.relative(root, path.resolve(dir)) || dir;
  return `Built from the newest of each row in the result files of ${name} (${files.join(', ')}; ${rows.length} rows).`;
}

const origin = from
  ? (fs.statSync(from).isDirectory()
      ? fromDirectory(from)
      : `Built from saved bench rows (${path.basename(from)}, ${rows.length} rows).`) + measuredOn()
  : `Built from a ${full ? 'full' : 'quick (small sizes)'} run of every bench suite (${rows.length} rows).` +
    (full
      ? ''
      : ' Where a quick run measures a smaller size than its row name says, the note column of the CSV says so.');
fs.writeFileSync(
  path.join(out, 'index.html'),
  pageHtml({
    machine: describeMachine(root),
    origin,
    failedSuites: failed,
    figures: rendered,
    missing: [...missing, ...NOT_BENCHED],
    accuracy,
  }),
);
console.log(`report: ${rendered.length} figures, ${missing.length} not measured → ${path.join(out, 'index.html')}`);
if (failed.length) console.error(`report: bench suites failed: ${failed.join(', ')}`);
