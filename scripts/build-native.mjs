// Builds the provider's native libsodium binding (provider-server/native/):
// one C file against Debian's libsodium-dev and Node's N-API headers, no
// node-gyp, linked with the Rust static library that does the group
// arithmetic of its two batched loops, base OTs and the blocklist OPRF
// (ot-base/, curve25519-dalek from crates.io, versions pinned by its
// Cargo.lock). Incremental: skipped when the .node file is newer than its
// sources.
// Without it the provider runs ristretto255 on libsodium's WebAssembly build
// (about 4x slower) and says so at start.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const native = path.join(root, 'provider-server/native');
const src = path.join(native, 'sodium.c');
const crate = path.join(native, 'ot-base');
const sources = [src, ...['Cargo.toml', 'Cargo.lock', 'src/lib.rs'].map((f) => path.join(crate, f))];
const out = path.join(native, 'build/pmf_sodium.node');
const targetDir = path.join(native, 'build/cargo');
const headers = ['/usr/include/node', path.join(path.dirname(process.execPath), '../include/node')].find((d) =>
  fs.existsSync(path.join(d, 'node_api.h')),
);
if (!headers) throw new Error('build-native: Node headers (node_api.h) not found; install nodejs headers');
if (fs.existsSync(out) && sources.every((f) => fs.statSync(out).mtimeMs > fs.statSync(f).mtimeMs)) process.exit(0);
fs.mkdirSync(path.dirname(out), { recursive: true });
const cargo = spawnSync(
  'cargo',
  [
    'build',
    '--release',
    '--locked',
    '--quiet',
    '--manifest-path',
    path.join(crate, 'Cargo.toml'),
    '--target-dir',
    targetDir,
  ],
  { stdio: 'inherit' },
);
if (cargo.error) throw new Error(`build-native: cargo not found (${cargo.error.message}); install Rust (rustup)`);
if (cargo.status !== 0) process.exit(cargo.status ?? 1);
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
    path.join(targetDir, 'release/libpmf_ot_base.a'),
    '-lsodium',
    // what Rust's std needs (cargo rustc -- --print native-static-libs)
    '-lpthread',
    '-ldl',
    '-lm',
  ],
  { stdio: 'inherit' },
);
if (cc.status !== 0) process.exit(cc.status ?? 1);
console.log(`native libsodium binding built: ${path.relative(root, out)}`);
