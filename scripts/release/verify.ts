// Is an installed add-on the release? Compares an installed copy (the folder
// Chromium unpacked it to, the .xpi Firefox or Thunderbird keeps, or the
// .crx/.xpi a store serves) with a package from `npm run release`, file by
// file. What the stores add is not the release's and is set aside: the
// Mozilla signature (META-INF/), the Chrome Web Store's hashes and signature
// (_metadata/) and the two keys the Web Store writes into manifest.json
// (key, update_url). Everything else must be byte for byte the same.
import fs from 'node:fs';
import { isDeepStrictEqual } from 'node:util';
import { dirEntries, readZip } from './zip.js';

export type Files = Map<string, Buffer>;

const STORE_ADDED = /^(META-INF|_metadata)\//;
const STORE_MANIFEST_KEYS = ['key', 'update_url'];

/** A CRX3 file is a header ("Cr24", version 3, header length, header) followed by a zip. */
function crxZip(data: Buffer): Buffer {
  if (data.subarray(0, 4).toString('latin1') !== 'Cr24') return data;
  if (data.readUInt32LE(4) !== 3) throw new Error('not a CRX3 file');
  return data.subarray(12 + data.readUInt32LE(8));
}

/** The files of an installed copy: a folder, or a .zip/.xpi/.crx file. */
export async function readInstalled(p: string): Promise<Files> {
  if (fs.statSync(p).isDirectory())
    return new Map(dirEntries(p).map((e) => [e.name, Buffer.from(e.data)] as [string, Buffer]));
  return readZip(crxZip(fs.readFileSync(p)));
}

/** Whether two manifest.json files say the same, once the keys a store writes into the installed one are dropped. */
function sameManifest(release: Buffer, installed: Buffer): boolean {
  try {
    const m = JSON.parse(installed.toString('utf8')) as Record<string, unknown>;
    for (const k of STORE_MANIFEST_KEYS) delete m[k];
    return isDeepStrictEqual(JSON.parse(release.toString('utf8')), m);
  } catch {
    return false;
  }
}

export interface Comparison {
  /** Files the release has that differ in, or are missing from, the installed copy, or that only the installed copy has. */
  differences: string[];
  /** Files the store added, set aside. */
  storeAdded: string[];
  /** Files that matched. */
  same: number;
}

export function compare(release: Files, installed: Files): Comparison {
  const differences: string[] = [];
  const storeAdded: string[] = [];
  let same = 0;
  for (const [name, data] of release) {
    const got = installed.get(name);
    if (!got) differences.push(`${name}: missing from the installed copy`);
    else if (name === 'manifest.json' ? sameManifest(data, got) : got.equals(data)) same++;
    else differences.push(`${name}: differs`);
  }
  for (const name of installed.keys()) {
    if (release.has(name)) continue;
    if (STORE_ADDED.test(name)) storeAdded.push(name);
    else differences.push(`${name}: not in the release`);
  }
  return { differences, storeAdded, same };
}
