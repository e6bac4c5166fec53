// The release's archives: reproducible zips (checked with Info-ZIP's own
// zipinfo/unzip as the independent reader), the source archive from git, and
// the comparison of an installed add-on with a release package.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { isGitCheckout, isTracked, sourceEntries, uncommitted } from '../release/source.js';
import { compare, readInstalled } from '../release/verify.js';
import { readZip, writeZip, type ZipEntry } from '../release/zip.js';
import { tempDir } from './temp-dir.js';

const dir = tempDir('pmf-release-archives-');

const entries: ZipEntry[] = [
  { name: 'manifest.json', data: Buffer.from('{"name":"x"}\n') },
  { name: 'icons/icon-16.png', data: Buffer.from([0x89, 0x50, 0x4e, 0x47, 1, 2, 3]) },
  { name: 'background.js', data: Buffer.from('console.log(1);\n'.repeat(500)) },
];

function writeFile(name: string, data: Uint8Array): string {
  const p = path.join(dir, name);
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, data);
  return p;
}

describe('reproducible zip', () => {
  it('depends only on the entries: names in byte order, every date 1980-01-01 00:00, no directory entries', async () => {
    const a = await writeZip(entries);
    // A different order, a second later, in another time zone: the same bytes.
    await new Promise((r) => setTimeout(r, 2100));
    const tz = process.env.TZ;
    process.env.TZ = 'Pacific/Kiritimati';
    const b = await writeZip([...entries].reverse());
    process.env.TZ = tz;
    assert.ok(a.equals(b), 'same entries, same archive');
    const file = writeFile('a.zip', a);
    // zipinfo -T: "yyyymmdd.hhmmss" per entry, in archive order.
    const listing = execFileSync('zipinfo', ['-T', file], { encoding: 'utf8' }).split('\n');
    const rows = listing.filter((l) => /^[-d]/.test(l)).map((l) => l.trim().split(/\s+/));
    assert.deepEqual(
      rows.map((r) => r.at(-1)),
      ['background.js', 'icons/icon-16.png', 'manifest.json'],
    );
    for (const r of rows) assert.equal(r.at(-2), '19800101.000000', r.join(' '));
    execFileSync('unzip', ['-tq', file]);
    assert.equal(
      execFileSync('unzip', ['-p', file, 'background.js'], { encoding: 'utf8' }),
      entries[2].data.toString(),
    );
  });

  it('keeps the Unix modes it is given and reads back what it wrote', async () => {
    const file = writeFile(
      'modes.zip',
      await writeZip([
        { name: 'run.sh', data: Buffer.from('#!/bin/sh\n'), mode: 0o755 },
        { name: 'README.md', data: Buffer.from('hi\n'), mode: 0o644 },
      ]),
    );
    const listing = execFileSync('zipinfo', [file], { encoding: 'utf8' });
    assert.match(listing, /^-rwxr-xr-x .* run\.sh$/m);
    assert.match(listing, /^-rw-r--r-- .* README\.md$/m);
    assert.deepEqual([...(await readZip(fs.readFileSync(file))).keys()], ['README.md', 'run.sh']);
  });

  it('refuses names that leave the archive and a mode on some entries only', async () => {
    await assert.rejects(writeZip([{ name: '../x', data: Buffer.from('') }]), /not relative/);
    await assert.rejects(writeZip([{ name: '/etc/x', data: Buffer.from('') }]), /not relative/);
    await assert.rejects(
      writeZip([
        { name: 'a', data: Buffer.from(''), mode: 0o644 },
        { name: 'b', data: Buffer.from('') },
      ]),
      /has no mode/,
    );
  });
});

describe('source archive', () => {
  const repo = path.join(dir, 'repo');
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.org', ...args], { cwd: repo });

  it('holds every tracked file with its git mode, and BUILD.md naming the version, commit and command', async () => {
    fs.mkdirSync(path.join(repo, 'scripts/release'), { recursive: true });
    fs.writeFileSync(path.join(repo, 'scripts/release/BUILD.md'), '{{version}} at {{commit}}: {{command}}\n');
    fs.writeFileSync(path.join(repo, 'setup.sh'), '#!/bin/sh\n', { mode: 0o755 });
    fs.writeFileSync(path.join(repo, '.gitignore'), 'dist/\n');
    fs.mkdirSync(path.join(repo, 'dist'));
    fs.writeFileSync(path.join(repo, 'dist/built.js'), 'not source');
    assert.equal(isGitCheckout(repo), false);
    git('init', '-q');
    git('add', '-A');
    git('commit', '-qm', 'one');
    assert.equal(isGitCheckout(repo), true);
    assert.deepEqual(uncommitted(repo), []);
    assert.equal(isTracked(repo, path.join(repo, 'setup.sh')), true);
    assert.equal(isTracked(repo, path.join(repo, 'dist/built.js')), false);
    const note = { version: '1.2.0', commit: 'c0ffee', command: 'npm run release -- --witness-policy p.json' };
    const first = sourceEntries(repo, note);
    assert.deepEqual(
      first.map((e) => [e.name, e.mode]),
      [
        ['.gitignore', 0o644],
        ['scripts/release/BUILD.md', 0o644],
        ['setup.sh', 0o755],
        ['BUILD.md', 0o644],
      ],
    );
    assert.equal(
      first.find((e) => e.name === 'BUILD.md')!.data.toString(),
      '1.2.0 at c0ffee: npm run release -- --witness-policy p.json\n',
    );
    // Files touched since (same content): the same archive.
    const later = new Date(Date.now() + 86_400_000);
    for (const f of ['setup.sh', '.gitignore']) fs.utimesSync(path.join(repo, f), later, later);
    assert.ok((await writeZip(first)).equals(await writeZip(sourceEntries(repo, note))));
    fs.writeFileSync(path.join(repo, 'new.txt'), 'x');
    assert.deepEqual(uncommitted(repo), ['?? new.txt']);
  });
});

describe('verifying an installed add-on against a release package', () => {
  const release = new Map(entries.map((e) => [e.name, Buffer.from(e.data)]));
  const manifest = { manifest_version: 3, name: 'PMF', version: '1.2.0', permissions: ['storage'] };
  release.set('manifest.json', Buffer.from(JSON.stringify(manifest, null, 2)));

  it('a copy as the stores deliver it (signature files, store keys in a reformatted manifest) is the release', () => {
    const installed = new Map(release);
    installed.set('META-INF/mozilla.rsa', Buffer.from('sig'));
    installed.set('_metadata/verified_contents.json', Buffer.from('[]'));
    installed.set('manifest.json', Buffer.from(JSON.stringify({ ...manifest, key: 'MIIB', update_url: 'https://x' })));
    assert.deepEqual(compare(release, installed), {
      differences: [],
      storeAdded: ['META-INF/mozilla.rsa', '_metadata/verified_contents.json'],
      same: 3,
    });
  });

  it('names each file changed, missing or added, and a manifest changed beyond the store keys', () => {
    const installed = new Map(release);
    const js = Buffer.from(release.get('background.js')!);
    js[0] ^= 1;
    installed.set('background.js', js);
    installed.delete('icons/icon-16.png');
    installed.set('extra.js', Buffer.from('fetch("https://evil.example")'));
    installed.set('manifest.json', Buffer.from(JSON.stringify({ ...manifest, permissions: ['storage', 'tabs'] })));
    assert.deepEqual(compare(release, installed).differences, [
      'manifest.json: differs',
      'icons/icon-16.png: missing from the installed copy',
      'background.js: differs',
      'extra.js: not in the release',
    ]);
  });

  it('reads a folder, a zip/xpi and a CRX3 file alike', async () => {
    const zip = await writeZip([...release].map(([name, data]) => ({ name, data })));
    const header = Buffer.from('proto-header');
    const crx = Buffer.concat([Buffer.from('Cr24'), u32(3), u32(header.length), header, zip]);
    const folder = path.join(dir, 'installed');
    for (const [name, data] of release) writeFile(path.join('installed', name), data);
    for (const p of [writeFile('pkg.xpi', zip), writeFile('pkg.crx', crx), folder])
      assert.deepEqual(compare(release, await readInstalled(p)).differences, [], p);
  });
});

function u32(n: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}
