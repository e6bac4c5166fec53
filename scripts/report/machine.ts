// What the numbers were measured on, printed at the top of the report.
import fs from 'node:fs';
import path from 'node:path';
import { describeCommit, describeHost } from '../../bench/results.js';

export interface Machine {
  date: string;
  cpu: string;
  memory: string;
  os: string;
  node: string;
  commit: string;
  libraries: string;
}

function version(root: string, pkg: string): string {
  const file = path.join(root, 'node_modules', pkg, 'package.json');
  return fs.existsSync(file) ? (JSON.parse(fs.readFileSync(file, 'utf8')) as { version: string }).version : 'missing';
}

export function describeMachine(root: string): Machine {
  return {
    date: new Date()
      .toISOString()
      .replace('T', ' ')
      .replace(/\.\d+Z$/, ' UTC'),
    ...describeHost(),
    commit: describeCommit(root),
    libraries: ['vega', 'vega-lite', 'node-seal', 'emp-wasm', 'paillier-bigint']
      .map((p) => `${p} ${version(root, p)}`)
      .join(', '),
  };
}
