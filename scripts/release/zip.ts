// Zip archives that depend only on their entries: names in byte order, every
// entry dated 1980-01-01 00:00 UTC (the earliest a zip can say), no directory
// entries, no file-system metadata unless asked for, and DEFLATE from JSZip's
// own pure-JS deflate (pako, pinned by package-lock.json) rather than the zlib
// built into Node, whose output may change from one Node release to the next.
import fs from 'node:fs';
import path from 'node:path';
import JSZip from 'jszip';

export const ZIP_DATE = new Date(Date.UTC(1980, 0, 1));

export interface ZipEntry {
  /** Path inside the archive, '/'-separated, relative. */
  name: string;
  data: Uint8Array;
  /** Unix permission bits (0o644, 0o755); given for every entry or for none. */
  mode?: number;
}

const byName = (a: ZipEntry, b: ZipEntry) => Buffer.compare(Buffer.from(a.name), Buffer.from(b.name));

export async function writeZip(entries: ZipEntry[]): Promise<Buffer> {
  const zip = new JSZip();
  const unix = entries.some((e) => e.mode !== undefined);
  for (const e of [...entries].sort(byName)) {
    if (unix && e.mode === undefined) throw new Error(`zip: ${e.name} has no mode though other entries have one`);
    if (e.name.startsWith('/') || e.name.split('/').includes('..')) throw new Error(`zip: ${e.name} is not relative`);
    // 0o100000: a regular file, so that unzip and zipinfo know the type as well as the mode.
    const unixPermissions = e.mode === undefined ? null : 0o100000 | e.mode;
    zip.file(e.name, e.data, { date: ZIP_DATE, createFolders: false, binary: true, unixPermissions });
  }
  return zip.generateAsync({
    type: 'nodebuffer',
    compression: 'DEFLATE',
    compressionOptions: { level: 9 },
    platform: unix ? 'UNIX' : 'DOS',
  });
}

/** The files of an archive, by name (directory entries skipped). */
export async function readZip(data: Uint8Array): Promise<Map<string, Buffer>> {
  const zip = await JSZip.loadAsync(data);
  const files = new Map<string, Buffer>();
  for (const f of Object.values(zip.files)) if (!f.dir) files.set(f.name, await f.async('nodebuffer'));
  return files;
}

/** Every file under `dir` as an entry named by its path relative to `dir`. */
export function dirEntries(dir: string): ZipEntry[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => {
      const abs = path.join(e.parentPath, e.name);
      return { name: path.relative(dir, abs).split(path.sep).join('/'), data: fs.readFileSync(abs) };
    });
}
