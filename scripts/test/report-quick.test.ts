// `npm run report` as a user runs it: every bench suite at quick sizes (about
// 75 s on this machine), then the report from those fresh rows. The e2e suite
// shows a report built from saved rows in Chromium (e2e/report.e2e.ts).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { FIGURES } from '../report/figures.js';

test('a quick run of every bench suite yields a report with every figure drawn', () => {
  const out = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-report-'));
  try {
    const run = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/report.ts', '--out', out], {
      encoding: 'utf8',
      timeout: 20 * 60_000,
    });
    assert.equal(run.status, 0, run.stderr);
    assert.doesNotMatch(run.stderr, /bench suites failed/);
    const drawn = fs.readdirSync(path.join(out, 'figures')).filter((f) => f.endsWith('.svg'));
    assert.equal(drawn.length, FIGURES.length, `figures drawn: ${drawn.join(', ')}`);
    assert.ok(fs.statSync(path.join(out, 'index.html')).size > 1000);
  } finally {
    fs.rmSync(out, { recursive: true, force: true });
  }
});
