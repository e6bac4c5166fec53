// The bench contract every suite relies on: --json prints one well-formed row
// per line, and bad arguments fail with a usage message.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
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
