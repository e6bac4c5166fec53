#!/usr/bin/env node
// Runs every test suite and ends with one summary line "N passed, N failed".
//   unit:   **/test/**/*.test.ts with node's test runner (TypeScript via tsx)
//   python: models/test/python with pytest in models/.venv
// Every area keeps its tests in <area>/test/ (a part's in a subfolder: extension/test/search,
// models/test/python).
//   e2e:    e2e/**/*.e2e.ts (built extension in Debian Chromium via Playwright, Firefox ESR via
//           puppeteer-core over WebDriver BiDi, Thunderbird ESR via Marionette with a local Dovecot)
//   lint:   scripts/lint.mjs (counts as one test), so CI gates on it too
//   real:   the e2e suites that drive real third-party programs (Thunderbird, Firefox, Roundcube,
//           Dovecot with the LMTP stage, HAProxy with PostgreSQL): `npm run test:real`
// Slow suites (*.slow.test.ts) run only with --slow or PMF_SLOW=1.
// Usage: node scripts/test.mjs [--only unit|python|e2e|real|lint] [--slow] [files or folders...]
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
const slow = args.includes('--slow') || process.env.PMF_SLOW === '1';
const explicit = args.filter((a, i) => !a.startsWith('--') && args[i - 1] !== '--only');
const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'build', '.venv', '.data']);

function find(dir, pred) {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return SKIP_DIRS.has(e.name) ? [] : find(p, pred);
    return pred(p) ? [p] : [];
  });
}

const isUnit = (p) =>
  /\/test\//.test(p) &&
  p.endsWith('.test.ts') &&
  !p.startsWith(path.join(root, 'e2e')) &&
  (slow || !p.endsWith('.slow.test.ts'));
const isE2e = (p) => p.endsWith('.e2e.ts');
const isRealStack = (p) => isE2e(p) && /\/(thunderbird|firefox|roundcube|lmtp|scale-out)[^/]*\.e2e\.ts$/.test(p);

const totals = { passed: 0, failed: 0, skipped: 0 };

function runNodeTests(files, extra = []) {
  if (files.length === 0) return;
  const tap = path.join(os.tmpdir(), `pmf-tests-${process.pid}-${Date.now()}.tap`);
  const res = spawnSync(
    process.execPath,
    [
      '--import',
      'tsx',
      '--test',
      '--test-reporter=spec',
      '--test-reporter-destination=stdout',
      '--test-reporter=tap',
      `--test-reporter-destination=${tap}`,
      ...extra,
      ...files,
    ],
    { cwd: root, stdio: 'inherit', env: process.env },
  );
  const text = fs.existsSync(tap) ? fs.readFileSync(tap, 'utf8') : '';
  fs.rmSync(tap, { force: true });
  const count = (k) => Number((text.match(new RegExp(`^# ${k} (\\d+)$`, 'm')) || [])[1] || 0);
  totals.passed += count('pass');
  totals.failed += count('fail') + count('cancelled');
  totals.skipped += count('skipped') + count('todo');
  if (res.status !== 0 && count('fail') + count('cancelled') === 0) totals.failed += 1; // crashed runner
}

function runPytest() {
  const py = path.join(root, 'models/.venv/bin/python');
  const testsDir = path.join(root, 'models/test/python');
  if (!fs.existsSync(testsDir)) return;
  if (!fs.existsSync(py)) {
    console.error('models/.venv is missing: run scripts/setup.sh');
    totals.failed += 1;
    return;
  }
  const res = spawnSync(
    py,
    ['-m', 'pytest', '-q', '-p', 'no:cacheprovider', ...(slow ? [] : ['-m', 'not slow']), testsDir],
    {
      cwd: root,
      encoding: 'utf8',
      env: process.env,
    },
  );
  process.stdout.write(res.stdout);
  process.stderr.write(res.stderr);
  const last = res.stdout.trim().split('\n').pop() || '';
  const n = (k) => Number((last.match(new RegExp(`(\\d+) ${k}`)) || [])[1] || 0);
  totals.passed += n('passed');
  totals.failed += n('failed') + n('error');
  totals.skipped += n('skipped') + n('deselected');
  if (res.status !== 0 && res.status !== 5 && n('failed') + n('error') === 0) totals.failed += 1;
}

function runLint() {
  const res = spawnSync(process.execPath, [path.join(root, 'scripts/lint.mjs')], { cwd: root, stdio: 'inherit' });
  if (res.status === 0) totals.passed += 1;
  else totals.failed += 1;
}

// A folder named on the command line stands for the test files under it (node's runner would
// take a folder for a module and run only whatever index it finds).
function expand(arg) {
  const p = path.resolve(arg);
  if (!fs.existsSync(p) || !fs.statSync(p).isDirectory()) return [p];
  return find(p, (f) => isE2e(f) || isUnit(f)).sort();
}

if (explicit.length > 0) {
  const files = explicit.flatMap(expand);
  if (files.length === 0) {
    console.error(`no test files under ${explicit.join(', ')}`);
    totals.failed += 1;
  }
  runNodeTests(files.filter((f) => !isE2e(f)));
  runNodeTests(files.filter(isE2e), ['--test-concurrency=1']);
} else {
  if (!only || only === 'unit') runNodeTests(find(root, isUnit).sort());
  if (!only || only === 'python') runPytest();
  // Browser tests share one Chromium profile directory per file; run serially.
  if (!only || only === 'lint') runLint();
  if (!only || only === 'e2e') runNodeTests(find(path.join(root, 'e2e'), isE2e).sort(), ['--test-concurrency=1']);
  if (only === 'real') runNodeTests(find(path.join(root, 'e2e'), isRealStack).sort(), ['--test-concurrency=1']);
}

console.log(`\n${totals.passed} passed, ${totals.failed} failed, ${totals.skipped} skipped`);
process.exit(totals.failed > 0 ? 1 : 0);
