// The bench contract every suite relies on: --json prints one well-formed row
// per line, --save keeps them in a dated result file, and bad arguments fail
// with a usage message.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function bench(...args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', ...args], { cwd: root, encoding: 'utf8' });
}

test('--suite wasm --quick --json prints one valid row per line', () => {
  const res = bench('--suite', 'wasm', '--quick', '--json');
  assert.equal(res.status, 0, res.stderr);
  const rows = res.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  assert.ok(rows.length >= 1);
  for (const row of rows) {
    assert.equal(row.suite, 'wasm');
    for (const key of ['case', 'metric', 'unit']) assert.equal(typeof row[key], 'string', key);
    assert.ok(Number.isFinite(row.value) && (row.value as number) > 0, `value ${row.value}`);
  }
  const overhead = rows.find((r) => r.case === 'call_overhead');
  assert.equal(overhead?.metric, 'time_ns');
});

test('--rows prints only the rows named', () => {
  const res = bench('--suite', 'wasm', '--quick', '--json', '--rows', 'call_overhead');
  assert.equal(res.status, 0, res.stderr);
  const rows = res.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as { case: string });
  assert.deepEqual(
    rows.map((r) => r.case),
    ['call_overhead'],
  );
});

test('unknown suite and missing --suite exit 2 with usage', () => {
  for (const args of [['--suite', 'no-such-suite'], []]) {
    const res = bench(...args);
    assert.equal(res.status, 2);
    assert.match(res.stderr, /usage: npm run bench -- --suite/);
  }
});

test('--save appends each row, with suite, machine and commit, to the dated result file', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-results-'));
  try {
    for (let i = 0; i < 2; i++) {
      const res = bench('--suite', 'wasm', '--quick', '--rows', 'call_overhead', '--save', dir);
      assert.equal(res.status, 0, res.stderr);
    }
    const files = fs.readdirSync(dir);
    assert.equal(files.length, 1, files.join(', '));
    assert.match(files[0], /^\d{4}-\d{2}-\d{2}-[\w.-]+\.jsonl$/);
    const saved = fs
      .readFileSync(path.join(dir, files[0]), 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    assert.equal(saved.length, 2, 'a second run appends');
    for (const row of saved) {
      assert.equal(row.suite, 'wasm');
      assert.equal(row.case, 'call_overhead');
      assert.equal(row.quick, true);
      assert.match(String(row.machine), /\d+ × .*GiB.*Node v\d+/);
      assert.ok(files[0].endsWith(`-${String(row.commit)}.jsonl`), `${files[0]} names commit ${String(row.commit)}`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
