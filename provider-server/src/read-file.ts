// Reads the provider's private files (secret keys, plaintext models) through
// one descriptor, so the type and mode checks and the read all see the same
// file whatever happens to the path meanwhile, and no library buffer holds a
// copy of the secret that we cannot wipe.
import fs from 'node:fs';

/**
 * Opens `file` read-only, checks it is a regular file, runs `check` on its
 * fstat before reading a byte, and returns its contents. `noFollow` refuses a
 * symbolic link as the last path component (O_NOFOLLOW). O_NONBLOCK keeps a
 * FIFO planted at the path from blocking the open; it is refused by type.
 */
export function readRegularFile(
  file: string,
  what: string,
  opts: { noFollow: boolean },
  check: (st: fs.Stats) => void,
): Uint8Array {
  const { O_RDONLY, O_NONBLOCK, O_NOFOLLOW } = fs.constants;
  let fd: number;
  try {
    fd = fs.openSync(file, O_RDONLY | O_NONBLOCK | (opts.noFollow ? O_NOFOLLOW : 0));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP') {
      throw new Error(`${what} ${file} is a symbolic link; refusing it (configure the file itself)`);
    }
    throw e;
  }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) throw new Error(`${what} ${file} is not a regular file`);
    check(st);
    const bytes = new Uint8Array(st.size);
    let n = 0;
    while (n < bytes.length) {
      const r = fs.readSync(fd, bytes, n, bytes.length - n, n);
      if (r === 0) break;
      n += r;
    }
    if (n !== bytes.length) {
      bytes.fill(0);
      throw new Error(`${what} ${file} changed size while being read`);
    }
    return bytes;
  } finally {
    fs.closeSync(fd);
  }
}

/** The permission bits of a mode as the octal digits `chmod` takes. */
export const octalMode = (st: fs.Stats): string => (st.mode & 0o777).toString(8);
