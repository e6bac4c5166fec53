// File systems that fail as production disks do, for tests of what the
// provider reports: a small tmpfs that fills up (ENOSPC) and a read-only
// bind mount (EROFS, which even root cannot write). Both need mount(2):
// mountsMissing says why a test cannot have them here. Every mount is
// undone when the test process exits.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../../scripts/test/temp-dir.js';

const mounted: string[] = [];

function mount(args: string[], dir: string): void {
  execFileSync('mount', [...args, dir], { stdio: 'pipe' });
  // Before tempDir's own exit handler removes the directories.
  if (mounted.length === 0)
    process.prependOnceListener('exit', () => {
      for (const d of mounted.reverse()) {
        try {
          execFileSync('umount', ['-l', d], { stdio: 'ignore' });
        } catch {
          // already unmounted
        }
      }
    });
  mounted.push(dir);
}

/** Why these mounts cannot be made here, or undefined when they can. */
export function mountsMissing(): string | undefined {
  const dir = tempDir('pmf-mount-probe-');
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'pipe' });
    execFileSync('umount', [dir], { stdio: 'pipe' });
    return undefined;
  } catch (e) {
    return `cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN): ${String((e as { stderr?: Buffer }).stderr ?? e).trim()}`;
  }
}

/** A fresh directory on a tmpfs of `bytes`. */
export function smallDisk(bytes: number): string {
  const dir = tempDir('pmf-small-disk-');
  mount(['-t', 'tmpfs', '-o', `size=${bytes},mode=0700`, 'tmpfs'], dir);
  return dir;
}

/** Fills the file system holding `dir` with one file; returns a function that removes it again. */
export function fillDisk(dir: string): () => void {
  const file = path.join(dir, 'filler');
  const fd = fs.openSync(file, 'w');
  const chunk = Buffer.alloc(64 * 1024, 1);
  try {
    for (;;) fs.writeSync(fd, chunk);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOSPC') throw e;
    // the last bytes a smaller write still fits
    for (let n = chunk.length / 2; n >= 1; n /= 2) {
      try {
        for (;;) fs.writeSync(fd, chunk, 0, n);
      } catch {
        // full at this size: try a smaller one
      }
    }
  } finally {
    fs.closeSync(fd);
  }
  return () => fs.rmSync(file);
}

/** Makes `dir` read-only in place (a read-only bind mount of itself). */
export function readOnly(dir: string): void {
  mount(['--bind', dir], dir);
  execFileSync('mount', ['-o', 'remount,ro,bind', dir], { stdio: 'pipe' });
}
