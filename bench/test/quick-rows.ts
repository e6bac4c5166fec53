// Runs one bench suite as `npm run bench -- --suite NAME --quick --json` does and
// returns its rows, for the tests that check a suite prints what the report names.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

export function quickRows<Row>(suite: string): Row[] {
  const res = spawnSync(process.execPath, ['--import', 'tsx', 'bench/run.ts', '--suite', suite, '--quick', '--json'], {
    cwd: root,
    encoding: 'utf8',
  });
  assert.equal(res.status, 0, res.stderr);
  return res.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Row);
}
