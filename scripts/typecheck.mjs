#!/usr/bin/env node
// Type-checks each area as its own TypeScript project: the tsconfig.json in a
// folder says where that code runs (DOM, WebWorker, Node or none of them), so
// shared code that reached for `process` or `document` fails here, not in a
// browser. A file is checked by the project of the nearest tsconfig.json above
// it (as editors do), and every .ts file must belong to that project, so no
// file goes unchecked. The root tsconfig.json holds the shared options only.
// Usage: node scripts/typecheck.mjs
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const SKIP_DIRS = new Set(['node_modules', '.git', 'dist', 'build', '.venv', '.data', 'test-results']);
const tsc = path.join(root, 'node_modules/.bin/tsc');

function walk(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return SKIP_DIRS.has(e.name) ? [] : walk(p);
    return e.isFile() ? [p] : [];
  });
}

const all = walk(root);
const tsFiles = all.filter((f) => f.endsWith('.ts'));
const projectDirs = new Set(all.filter((f) => path.basename(f) === 'tsconfig.json').map((f) => path.dirname(f)));

/** The folder of the nearest tsconfig.json above `file`. */
function projectOf(file) {
  let dir = path.dirname(file);
  while (!projectDirs.has(dir) && dir !== root) dir = path.dirname(dir);
  return dir;
}

const owned = new Map();
for (const f of tsFiles) owned.set(projectOf(f), [...(owned.get(projectOf(f)) ?? []), f]);
let failed = false;
for (const dir of [...projectDirs].sort()) {
  // Folders another change is still filling (mail/, client/core/) have a project before they have code.
  if (!owned.has(dir)) continue;
  const rel = path.relative(root, dir) || '.';
  // Incremental: a rerun checks only what changed since (state in .data/, per worktree).
  const buildInfo = path.join(root, '.data/tsbuildinfo', `${rel.replace(/\//g, '+')}.tsbuildinfo`);
  const res = spawnSync(
    tsc,
    [
      '-p',
      path.join(dir, 'tsconfig.json'),
      '--incremental',
      '--tsBuildInfoFile',
      buildInfo,
      '--listFiles',
      '--pretty',
      'false',
    ],
    { cwd: root, encoding: 'utf8' },
  );
  const listed = new Set();
  for (const line of res.stdout.split('\n')) {
    if (path.isAbsolute(line) && fs.existsSync(line)) listed.add(line);
    else if (line.trim()) console.log(line);
  }
  const missed = owned.get(dir).filter((f) => !listed.has(f));
  for (const f of missed) console.log(`${path.relative(root, f)}: not part of the project ${rel}/tsconfig.json`);
  if (res.status !== 0 || missed.length) failed = true;
  console.log(`tsc ${rel}: ${res.status === 0 && !missed.length ? 'ok' : 'FAILED'}`);
}
process.exit(failed ? 1 : 0);
