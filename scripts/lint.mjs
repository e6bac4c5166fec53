#!/usr/bin/env node
// One lint entry point for the three languages: ESLint + Prettier + tsc (one
// project per area, scripts/typecheck.mjs) for TypeScript, clang-format for
// the C++ under wasm/src and the C of provider-server/native, ruff for the
// Python of models/ and wasm/tools, php -l for the Roundcube plugin's PHP,
// and scripts/lint-prose.mjs: no document or comment names a date, a work
// session or a tracking number.
// --fix rewrites formatting instead of checking it.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const fix = process.argv.includes('--fix');
const bin = (name) => path.join(root, 'node_modules/.bin', name);
let failed = [];

function run(label, cmd, args) {
  process.stdout.write(`lint: ${label}\n`);
  const res = spawnSync(cmd, args, { cwd: root, stdio: 'inherit' });
  if (res.status !== 0) failed.push(label);
}

function files(dir, exts) {
  const abs = path.join(root, dir);
  if (!fs.existsSync(abs)) return [];
  return fs
    .readdirSync(abs, { withFileTypes: true, recursive: true })
    .filter((e) => e.isFile() && exts.some((x) => e.name.endsWith(x)))
    .map((e) => path.relative(root, path.join(e.parentPath ?? e.path, e.name)));
}

run('eslint', bin('eslint'), fix ? ['--fix', '.'] : ['.']);
run('prettier', bin('prettier'), [fix ? '--write' : '--check', '--log-level=warn', '**/*.{ts,mjs,js,json,css,html}']);
run('tsc', process.execPath, ['scripts/typecheck.mjs']);

const cpp = [...files('wasm/src', ['.cpp', '.h', '.hpp']), ...files('provider-server/native', ['.c'])];
if (cpp.length) run('clang-format', 'clang-format', fix ? ['-i', ...cpp] : ['--dry-run', '-Werror', ...cpp]);

const ruff = path.join(root, 'models/.venv/bin/ruff');
if (files('models', ['.py']).length) {
  if (!fs.existsSync(ruff)) failed.push('ruff (models/.venv missing: run scripts/setup.sh)');
  else {
    // wasm/tools holds the lattice security estimate, in the same Python and style.
    const py = ['--config', 'models/ruff.toml', 'models', 'wasm/tools'];
    run('ruff check', ruff, fix ? ['check', '--fix', ...py] : ['check', ...py]);
    run('ruff format', ruff, fix ? ['format', ...py] : ['format', '--check', ...py]);
  }
}

// PHP: syntax only (the plugin runs in e2e/roundcube.e2e.ts); setup.sh installs PHP for Roundcube.
for (const php of files('provider-server/roundcube-plugin', ['.php', '.php.dist']))
  run(`php -l ${php}`, 'php', ['-l', '-n', php]);

run('prose (dates, sessions, tracking numbers)', process.execPath, ['scripts/lint-prose.mjs']);

if (failed.length) {
  console.error(`lint failed: ${failed.join(', ')}`);
  process.exit(1);
}
console.log('lint: all clean');
