// A store package names the witnesses its package-log check trusts: the
// release refuses to build one whose built-in witness policy is empty, unless
// it is marked as a development build. And what the release command refuses
// before it builds.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { ed25519 } from '@noble/curves/ed25519.js';
import { formatVerifierKey, SIG_COSIGNATURE_V1 } from '../../protocol/signed-note.js';
import { releasePolicy } from '../release/policy.js';
import { tempDir } from './temp-dir.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const dir = tempDir('pmf-release-policy-');
const file = (name: string, body: unknown) => {
  const p = path.join(dir, name);
  fs.writeFileSync(p, typeof body === 'string' ? body : JSON.stringify(body));
  return p;
};
const witness = formatVerifierKey('witness.example/w1', SIG_COSIGNATURE_V1, ed25519.getPublicKey(new Uint8Array(32)));

describe('the witness policy a release builds in', () => {
  it('is the given file, checked and normalized', () => {
    const p = file('good.json', { witnesses: [` ${witness} `], quorum: 1 });
    assert.equal(releasePolicy(p, false), `${JSON.stringify({ quorum: 1, witnesses: [witness] }, null, 2)}\n`);
  });

  it('must name a quorum of at least one witness for a store package', () => {
    assert.throws(() => releasePolicy(undefined, false), /names the witnesses.*--witness-policy FILE.*--dev/);
    const empty = file('empty.json', { quorum: 0, witnesses: [] });
    assert.throws(() => releasePolicy(empty, false), /empty\.json: a quorum of 0 turns the witness check off/);
    const off = file('off.json', { quorum: 0, witnesses: [witness] });
    assert.throws(() => releasePolicy(off, false), /a quorum of 0/);
  });

  it('may be empty in a development build', () => {
    assert.equal(releasePolicy(undefined, true), undefined);
    assert.match(releasePolicy(file('empty-dev.json', { quorum: 0, witnesses: [] }), true)!, /"quorum": 0/);
  });

  it('refuses a file that is not a policy, naming the file', () => {
    assert.throws(() => releasePolicy(file('bad.json', '{'), false), /bad\.json: .*JSON/);
    const two = file('two.json', { quorum: 2, witnesses: [witness] });
    assert.throws(() => releasePolicy(two, false), /two\.json: witness policy: quorum must be/);
    assert.throws(() => releasePolicy(path.join(dir, 'absent.json'), false), /absent\.json: .*ENOENT/);
  });
});

describe('`npm run release` stops before building anything', () => {
  const release = (...args: string[]) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'scripts/release.ts', ...args], { cwd: root, encoding: 'utf8' });

  it('without a witness policy', () => {
    const out = path.join(dir, 'out');
    const res = release('--out', out);
    assert.equal(res.status, 1);
    assert.match(res.stderr, /^release refused: a store package names the witnesses/);
    assert.equal(fs.existsSync(out), false);
  });

  it('rather than empty an output folder that holds the sources', () => {
    const res = release('--dev', '--out', path.dirname(root));
    assert.equal(res.status, 1);
    assert.match(res.stderr, /^release refused: --out .* holds the repository/);
    assert.ok(fs.existsSync(path.join(root, 'package.json')));
  });
});
