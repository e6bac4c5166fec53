// `npm run release`, twice, as a store reviewer and a user checking a release
// would run it: once in a fresh clone of the working tree's commit (the WASM
// core compiled from scratch), once from that build's source archive unpacked
// in another directory, at another time, in another time zone, with other
// file dates (the WASM core reused from this checkout). The store packages
// must be byte for byte the same, hold no build directory and carry the
// witness policy given; then Mozilla's linter (`web-ext lint`) checks the
// Firefox and Thunderbird packages and the Chrome Web Store rules the
// Chromium one.
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { ed25519 } from '@noble/curves/ed25519.js';
import { formatVerifierKey, SIG_COSIGNATURE_V1 } from '../protocol/signed-note.js';
import { justifiedPermissions, packageName, TARGETS, type Target } from '../scripts/release/packages.js';
import { chromeStoreProblems } from '../scripts/release/store-rules.js';
import { readZip } from '../scripts/release/zip.js';
import { root } from './fixtures/browser.js';

const work = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-release-'));
const clone = path.join(work, 'clone');
const fromSource = path.join(work, 'from', 'the', 'source', 'archive');
const { version } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
const WITNESS = formatVerifierKey(
  'witness.example/release-test',
  SIG_COSIGNATURE_V1,
  ed25519.getPublicKey(new Uint8Array(32).fill(7)),
);
/** Where a release commits its witness policy (scripts/release/README.md). */
const POLICY = 'scripts/release/witness-policy.json';
const OLD = new Date('2001-02-03T04:05:06Z');

function sh(cwd: string, cmd: string, args: string[], env: NodeJS.ProcessEnv = {}): string {
  return execFileSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

/** `npm run release` in `dir`; its stderr on failure. */
function release(dir: string, env: NodeJS.ProcessEnv, ...args: string[]) {
  return spawnSync(process.execPath, ['--import', 'tsx', 'scripts/release.ts', ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { ...process.env, ...env },
    maxBuffer: 64 * 1024 * 1024,
  });
}

/** A git repository holding this checkout's files and a witness policy as one commit: what a clone of it would be. */
function cloneWorkingTree(dest: string): void {
  fs.mkdirSync(path.dirname(path.join(dest, POLICY)), { recursive: true });
  fs.writeFileSync(path.join(dest, POLICY), JSON.stringify({ quorum: 1, witnesses: [WITNESS] }));
  const files = sh(root, 'git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard']).split('\0');
  for (const f of files.filter((f) => f && fs.existsSync(path.join(root, f)))) {
    fs.mkdirSync(path.dirname(path.join(dest, f)), { recursive: true });
    fs.copyFileSync(path.join(root, f), path.join(dest, f));
    fs.chmodSync(path.join(dest, f), fs.statSync(path.join(root, f)).mode);
  }
  const who = {
    GIT_AUTHOR_NAME: 't',
    GIT_AUTHOR_EMAIL: 't@example.org',
    GIT_COMMITTER_NAME: 't',
    GIT_COMMITTER_EMAIL: 't@example.org',
  };
  sh(dest, 'git', ['init', '-q']);
  sh(dest, 'git', ['add', '-A']);
  sh(dest, 'git', ['commit', '-qm', 'release test'], who);
}

/** The shared npm dependencies (read only), as `npm ci` would have put them. */
const linkModules = (dir: string) =>
  fs.symlinkSync(fs.realpathSync(path.join(root, 'node_modules')), path.join(dir, 'node_modules'));

function setTimes(dir: string, when: Date): void {
  for (const e of fs.readdirSync(dir, { recursive: true, withFileTypes: true }))
    if (e.isFile()) fs.utimesSync(path.join(e.parentPath, e.name), when, when);
}

const outOf = (dir: string) => path.join(dir, 'dist/release');
const sha256 = (p: string) => crypto.createHash('sha256').update(fs.readFileSync(p)).digest('hex');

describe('release', { timeout: 30 * 60_000 }, () => {
  before(() => {
    // The checkout's own WASM build, current, for the second build to reuse.
    sh(root, process.execPath, ['scripts/build-wasm.mjs']);
  });
  after(() => fs.rmSync(work, { recursive: true, force: true }));

  it('refuses a store release of uncommitted changes or with a witness policy not committed', () => {
    cloneWorkingTree(clone);
    linkModules(clone);
    const elsewhere = path.join(work, 'policy.json');
    fs.copyFileSync(path.join(clone, POLICY), elsewhere);
    let res = release(clone, {}, '--witness-policy', elsewhere);
    assert.equal(res.status, 1, res.stderr);
    assert.match(res.stderr, /release refused: .*policy\.json is not committed/);
    fs.writeFileSync(path.join(clone, 'uncommitted.txt'), 'x');
    res = release(clone, {}, '--witness-policy', POLICY);
    assert.equal(res.status, 1, res.stderr);
    assert.match(res.stderr, /release refused: uncommitted changes/);
    fs.rmSync(path.join(clone, 'uncommitted.txt'));
  });

  it('builds the store packages, the source archive, a changelog and their sums in a clean clone', () => {
    const res = release(clone, { TZ: 'UTC' }, '--witness-policy', POLICY);
    assert.equal(res.status, 0, res.stderr);
    const names = [...TARGETS.map((t) => packageName(t, version)), `pmf-source-${version}.zip`].sort();
    const sums = fs.readFileSync(path.join(outOf(clone), 'SHA256SUMS'), 'utf8');
    assert.deepEqual(
      sums
        .trim()
        .split('\n')
        .map((l) => l.split('  ')),
      names.map((n) => [sha256(path.join(outOf(clone), n)), n]),
    );
    assert.match(
      fs.readFileSync(path.join(outOf(clone), 'CHANGELOG.md'), 'utf8'),
      /^# Changes in .*\n[^]*- release test \(/,
    );
  });

  it('builds the same store packages, byte for byte, from the source archive elsewhere and later', async () => {
    fs.mkdirSync(fromSource, { recursive: true });
    sh(fromSource, 'unzip', ['-q', path.join(outOf(clone), `pmf-source-${version}.zip`)]);
    const buildNote = fs.readFileSync(path.join(fromSource, 'BUILD.md'), 'utf8');
    assert.ok(buildNote.includes(`\nnpm run release -- --witness-policy ${POLICY}\n`), buildNote);
    assert.equal(fs.existsSync(path.join(fromSource, '.git')), false);
    setTimes(fromSource, OLD);
    linkModules(fromSource);
    fs.cpSync(path.join(root, 'wasm/build'), path.join(fromSource, 'wasm/build'), {
      recursive: true,
      preserveTimestamps: true,
    });
    // BUILD.md's command, as a reviewer runs it.
    const res = release(fromSource, { TZ: 'Asia/Kathmandu' }, '--witness-policy', POLICY);
    assert.equal(res.status, 0, res.stderr);
    assert.match(res.stdout, /wasm: up to date/, 'the WASM core was reused, not rebuilt');
    for (const target of TARGETS) {
      const name = packageName(target, version);
      assert.equal(sha256(path.join(outOf(fromSource), name)), sha256(path.join(outOf(clone), name)), name);
    }
  });

  it('packages hold the witness policy given and no path of the machine that built them', async () => {
    for (const target of TARGETS) {
      const files = await readZip(fs.readFileSync(path.join(outOf(clone), packageName(target, version))));
      const code = [...files].filter(([n]) => n.endsWith('.js'));
      assert.ok(
        code.some(([, d]) => d.includes(WITNESS)),
        `${target}: the witness is built in`,
      );
      for (const [name, data] of files)
        for (const dir of [work, root, os.homedir()])
          assert.equal(data.includes(dir), false, `${target} ${name} holds ${dir}`);
    }
  });

  it('passes the Chrome Web Store rules on the Chromium package', async () => {
    const files = await readZip(fs.readFileSync(path.join(outOf(clone), packageName('chromium', version))));
    assert.deepEqual(chromeStoreProblems(files, justifiedPermissions(root)), []);
  });

  for (const target of ['firefox', 'thunderbird'] as const)
    it(`passes web-ext lint (addons-linter) on the ${target} package`, async () => lintPackage(target));
});

interface LintMessage {
  code: string;
  message: string;
}

/** Thunderbird 128 permissions/keys unknown to the Firefox linter. */
const THUNDERBIRD_ONLY = new Set(['MANIFEST_PERMISSIONS', 'MISSING_DATA_COLLECTION_PERMISSIONS']);

async function lintPackage(target: Extract<Target, 'firefox' | 'thunderbird'>): Promise<void> {
  const unpacked = path.join(work, `lint-${target}`);
  for (const [name, data] of await readZip(fs.readFileSync(path.join(outOf(clone), packageName(target, version))))) {
    fs.mkdirSync(path.dirname(path.join(unpacked, name)), { recursive: true });
    fs.writeFileSync(path.join(unpacked, name), data);
  }
  const args = ['web-ext', 'lint', '--source-dir', unpacked, '--output', 'json', '--no-input', '--no-config-discovery'];
  // No update check against the registry at test time.
  const res = spawnSync('npx', args, { cwd: root, encoding: 'utf8', env: { ...process.env, NO_UPDATE_NOTIFIER: '1' } });
  const json = res.stdout.slice(res.stdout.indexOf('{'));
  assert.ok(json.length > 0, `web-ext lint produced no report: ${res.stderr}`);
  const report = JSON.parse(json) as { errors: LintMessage[]; warnings: LintMessage[] };
  const describeAll = (msgs: LintMessage[]) => msgs.map((m) => `${m.code}: ${m.message}`).join('\n');
  assert.deepEqual(report.errors, [], describeAll(report.errors));
  const allowed = target === 'thunderbird' ? THUNDERBIRD_ONLY : new Set<string>();
  const unexpected = report.warnings.filter((w) => !allowed.has(w.code));
  assert.deepEqual(unexpected, [], describeAll(unexpected));
  // Permission warnings only for Thunderbird's own (tb-schema.test.ts checks them against Thunderbird).
  for (const w of report.warnings.filter((x) => x.code === 'MANIFEST_PERMISSIONS'))
    assert.match(w.message, /messagesRead|accountsRead|messagesUpdate|messagesMove/);
}
