// Compiles provider-server (and what it imports) to JavaScript in dist/server,
// so a provider runs it with plain `node`, no TypeScript loader at run time:
//   node dist/server/provider-server/src/cli.js serve --config FILE
// tsc emits the .ts sources; the files it does not emit (the WASM core's
// Emscripten glue, the worker bootstrap, the CommonJS loader of libsodium, the
// native libsodium binding) are
// copied beside them.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const out = path.join(root, 'dist/server');
fs.rmSync(out, { recursive: true, force: true });
const tsc = spawnSync(
  process.execPath,
  [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', 'provider-server/tsconfig.build.json'],
  {
    cwd: root,
    stdio: 'inherit',
  },
);
if (tsc.status !== 0) process.exit(tsc.status ?? 1);
const copy = [
  'wasm/build/pmf_core.js',
  'wasm/build/package.json',
  'wasm/ts/sodium.cjs',
  'provider-server/src/workers/bootstrap.mjs',
];
// The native libsodium binding, when built (the server says so at start when it is not).
if (fs.existsSync(path.join(root, 'provider-server/native/build/pmf_sodium.node')))
  copy.push('provider-server/native/build/pmf_sodium.node');
for (const f of fs.readdirSync(path.join(root, 'wasm/build'))) if (f.endsWith('.wasm')) copy.push(`wasm/build/${f}`);
for (const f of copy) {
  fs.mkdirSync(path.dirname(path.join(out, f)), { recursive: true });
  fs.copyFileSync(path.join(root, f), path.join(out, f));
}
// The compiled tree is ES modules like the sources (wasm/build keeps its own CommonJS marker).
fs.writeFileSync(path.join(out, 'package.json'), '{ "type": "module" }\n');
console.log(`provider-server compiled to ${path.relative(root, out)}/`);
