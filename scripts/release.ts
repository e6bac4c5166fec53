// `npm run release -- --witness-policy FILE [--out DIR]` (or `--dev` instead
// of a policy): the store packages of the version in package.json, built so
// that anyone can rebuild them byte for byte (scripts/release/README.md).
// Writes to DIR (default dist/release):
//   pmf-chromium-V.zip, pmf-firefox-V.xpi, pmf-thunderbird-V.xpi  the store packages
//   pmf-source-V.zip   every tracked file + BUILD.md, for the Mozilla stores' review
//   CHANGELOG.md       the commits since the previous release tag
//   SHA256SUMS         of the above archives
//   unpacked/          the webpack build the packages were made from
// A --dev build adds "-dev" to every name and may leave the witness policy
// empty. Outside a git checkout (an unpacked source archive) only the store
// packages are made.
import { execFileSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { changelog } from './release/changelog.js';
import { buildPackage, justifiedPermissions, packageName, PackageRefused, TARGETS } from './release/packages.js';
import { PolicyRefused, releasePolicy } from './release/policy.js';
import { headCommit, isGitCheckout, isTracked, sourceEntries, uncommitted } from './release/source.js';
import { isChromeVersion } from './release/store-rules.js';
import { writeZip } from './release/zip.js';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

class Refused extends Error {}

function run(cmd: string, args: string[]): void {
  execFileSync(cmd, args, { cwd: root, stdio: ['ignore', 'inherit', 'inherit'] });
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'witness-policy': { type: 'string' },
      dev: { type: 'boolean', default: false },
      out: { type: 'string' },
    },
  });
  const dev = values.dev ?? false;
  const { version: base } = JSON.parse(fs.readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  if (!isChromeVersion(base))
    throw new Refused(`package.json's version ${base} is not 1 to 4 dot-separated numbers, as the stores need`);
  const version = dev ? `${base}-dev` : base;
  const policyFile = values['witness-policy'];
  const policy = releasePolicy(policyFile, dev);
  const git = isGitCheckout(root);
  // A store release is built from a commit, witness policy included, so that
  // its source archive and anyone rebuilding it from the tag start from the same files.
  if (git && !dev && uncommitted(root).length > 0)
    throw new Refused('uncommitted changes (git status): commit them, or build with --dev');
  if (git && !dev && !isTracked(root, policyFile!))
    throw new Refused(`${policyFile} is not committed: a store release's witness policy is part of its commit`);

  const out = path.resolve(values.out ?? path.join(root, 'dist/release'));
  // The output folder is emptied first: never one that holds the sources.
  if (!path.relative(out, root).startsWith('..')) throw new Refused(`--out ${out} holds the repository`);
  fs.rmSync(out, { recursive: true, force: true });
  const unpacked = path.join(out, 'unpacked');
  fs.mkdirSync(unpacked, { recursive: true });
  const env = ['--env', `outDir=${unpacked}`];
  if (policy) {
    fs.writeFileSync(path.join(out, 'witness-policy.json'), policy);
    env.push('--env', `witnessPolicy=${path.join(out, 'witness-policy.json')}`);
  }
  run(process.execPath, ['scripts/build-wasm.mjs']);
  run('npx', ['webpack', '--mode', 'production', '--stats', 'errors-warnings', ...env]);

  const artifacts = new Map<string, Buffer>();
  const justified = justifiedPermissions(root);
  for (const target of TARGETS)
    artifacts.set(packageName(target, version), await buildPackage(path.join(unpacked, target), target, justified));
  if (git) {
    const flags = policyFile ? ['--witness-policy', path.relative(root, path.resolve(policyFile))] : [];
    const command = ['npm run release --', ...(dev ? ['--dev'] : []), ...flags].join(' ');
    const note = { version, commit: headCommit(root), command };
    artifacts.set(`pmf-source-${version}.zip`, await writeZip(sourceEntries(root, note)));
    fs.writeFileSync(path.join(out, 'CHANGELOG.md'), changelog(root, version));
  } else console.log('release: not a git checkout, so no source archive and no changelog');

  const sums = [...artifacts]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([name, data]) => {
      fs.writeFileSync(path.join(out, name), data);
      return `${crypto.createHash('sha256').update(data).digest('hex')}  ${name}\n`;
    });
  fs.writeFileSync(path.join(out, 'SHA256SUMS'), sums.join(''));
  console.log(`release ${version}${dev ? ' (development build)' : ''}: ${path.relative(root, out)}/\n${sums.join('')}`);
}

main().catch((e: unknown) => {
  const refused = e instanceof Refused || e instanceof PolicyRefused || e instanceof PackageRefused;
  console.error(refused ? `release refused: ${(e as Error).message}` : `release failed: ${(e as Error).stack ?? e}`);
  process.exit(1);
});
