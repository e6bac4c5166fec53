// The source archive the Mozilla stores ask for with a minified add-on: every
// file git tracks at the release commit (the witness policy file among them),
// with git's file modes, and BUILD.md at its root saying how to rebuild the
// packages byte for byte from it.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import type { ZipEntry } from './zip.js';

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** Whether `dir` is a git checkout (a source archive, unpacked, is not). */
export function isGitCheckout(dir: string): boolean {
  try {
    return git(dir, 'rev-parse', '--show-toplevel').trim() === fs.realpathSync(dir);
  } catch {
    return false;
  }
}

/** What `git status` shows: changed, staged and untracked (not ignored) files. */
export function uncommitted(dir: string): string[] {
  return git(dir, 'status', '--porcelain', '--untracked-files=normal').split('\n').filter(Boolean);
}

/** Whether `file` is a file git tracks in the checkout `dir`. */
export function isTracked(dir: string, file: string): boolean {
  try {
    git(dir, 'ls-files', '--error-unmatch', '--', path.relative(dir, path.resolve(file)));
    return true;
  } catch {
    return false;
  }
}

export function headCommit(dir: string): string {
  return git(dir, 'rev-parse', 'HEAD').trim();
}

/** Every tracked file of `dir` as an archive entry (git's mode: 0o755 or 0o644). */
export function trackedEntries(dir: string): ZipEntry[] {
  return git(dir, 'ls-files', '--stage', '-z')
    .split('\0')
    .filter(Boolean)
    .map((line) => {
      const [meta, name] = line.split('\t');
      const mode = meta.split(' ')[0];
      if (mode !== '100644' && mode !== '100755') throw new Error(`source archive: ${name} is not a plain file`);
      return { name, data: fs.readFileSync(path.join(dir, name)), mode: mode === '100755' ? 0o755 : 0o644 };
    });
}

export interface BuildNote {
  version: string;
  commit: string;
  /** The command that made the packages (`npm run release -- …`), for BUILD.md. */
  command: string;
}

/** The archive's entries: the tracked files and BUILD.md. */
export function sourceEntries(dir: string, note: BuildNote): ZipEntry[] {
  const build = fs
    .readFileSync(path.join(dir, 'scripts/release/BUILD.md'), 'utf8')
    .replaceAll('{{version}}', note.version)
    .replaceAll('{{commit}}', note.commit)
    .replaceAll('{{command}}', note.command);
  const tracked = trackedEntries(dir);
  if (tracked.some((t) => t.name === 'BUILD.md'))
    throw new Error('source archive: the repository has its own BUILD.md');
  return [...tracked, { name: 'BUILD.md', data: Buffer.from(build), mode: 0o644 }];
}
