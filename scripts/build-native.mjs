// Builds the provider's native libsodium binding (provider-server/native/):
// one C file against Debian's libsodium-dev and Node's N-API headers, no
// node-gyp. Incremental: skipped when the .node file is newer than its source.
// Without it the provider runs ristretto255 on libsodium's WebAssembly build
// (about 4x slower) and says so at start.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const src = path.join(root, 'provider-server/native/sodium.c');
const out = path.join(root, 'provider-server/native/build/pmf_sodium.node');
const headers = ['/usr/include/node', path.join(path.dirname(process.execPath), '../include/node')].find((d) =>
  fs.existsSync(path.join(d, 'node_api.h')),
);
if (!headers) throw new Error('build-native: Node headers (node_api.h) not found; install nodejs headers');
if (fs.existsSync(out) && fs.statSync(out).mtimeMs > fs.statSync(src).mtimeMs) process.exit(0);
fs.mkdirSync(path.dirname(out), { recursive: true });
const cc = spawnSync(
  'cc',
  [
    '-O2',
    '-Wall',
    '-Werror',
    '-shared',
    '-fPIC',
    '-DNODE_GYP_MODULE_NAME=pmf_sodium',
    `-I${headers}`,
    src,
    '-o',
    out,
    '-lsodium',
  ],
  { stdio: 'inherit' },
);
if (cc.status !== 0) process.exit(cc.status ?? 1);
console.log(`native libsodium binding built: ${path.relative(root, out)}`);
