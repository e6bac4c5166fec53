// The provider's secret key files (model keys, blocklist OPRF keys, the
// package log's signing key): written once, readable by the owner only, and
// read back through one descriptor that refuses links and loose modes.
import fs from 'node:fs';
import { octalMode, readRegularFile } from './read-file.js';

const KEY_MODE = 0o600;

/** Writes a new secret file readable by the owner only (refuses to overwrite). */
export function writeSecretFile(file: string, data: Uint8Array): void {
  const fd = fs.openSync(file, 'wx', KEY_MODE);
  try {
    fs.fchmodSync(fd, KEY_MODE); // the umask cannot widen it, but be explicit
    fs.writeSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Reads a secret key file, refusing a symbolic link, anything but a regular
 * file, and a file that group or others can access.
 */
export function readSecretFile(file: string): Uint8Array {
  return readRegularFile(file, 'secret key file', { noFollow: true }, (st) => {
    if ((st.mode & 0o077) !== 0) {
      throw new Error(`secret key file ${file} has mode ${octalMode(st)}; it must be 600 (chmod 600 it)`);
    }
  });
}
