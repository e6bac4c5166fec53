// What the numbers were measured on, printed at the top of the report.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

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
  const cpus = os.cpus();
  const git = spawnSync('git', ['describe', '--always', '--dirty'], { cwd: root, encoding: 'utf8' });
  return {
    date: new Date()
      .toISOString()
      .replace('T', ' ')
      .replace(/\.\d+Z$/, ' UTC'),
    cpu: `${cpus.length} × ${cpus[0]?.model.trim() ?? 'unknown'}`,
    memory: `${(os.totalmem() / 2 ** 30).toFixed(1)} GiB`,
    os: `${os.type()} ${os.release()} (${os.arch()})`,
    node: process.version,
    commit: git.status === 0 ? git.stdout.trim() : 'unknown',
    libraries: ['vega', 'vega-lite', 'node-seal', 'emp-wasm', 'paillier-bigint']
      .map((p) => `${p} ${version(root, p)}`)
      .join(', '),
  };
}
