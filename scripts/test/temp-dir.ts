// Temporary directories for tests: each is removed, with what it holds, when
// the test process exits (node --test runs each file in its own process), so
// a suite run leaves nothing behind in the OS's temp directory.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const made: string[] = [];

/** A fresh directory under os.tmpdir() named `prefix` + random characters. */
export function tempDir(prefix: string): string {
  if (made.length === 0)
    process.once('exit', () => made.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
  made.push(dir);
  return dir;
}
