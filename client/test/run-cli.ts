// Runs the client CLI in-process: what it printed on stdout, line by line.
// A non-zero exit code fails the calling test.
import assert from 'node:assert/strict';
import { main } from '../node/cli.js';

export async function runCli(args: string[]): Promise<string[]> {
  const lines: string[] = [];
  const log = console.log;
  console.log = (...a: unknown[]) => void lines.push(...a.join(' ').split('\n'));
  try {
    assert.equal(await main(args), 0);
  } finally {
    console.log = log;
  }
  return lines;
}
