// One store package per target, from the webpack build's unpacked folder of
// that target: the files as built, in a reproducible zip (zip.ts), refused
// when it carries what no store package may or breaks the Chrome Web Store's
// rules (store-rules.ts).
import fs from 'node:fs';
import path from 'node:path';
import { chromeStoreProblems, justifications, unwantedFiles } from './store-rules.js';
import { dirEntries, writeZip } from './zip.js';

export const TARGETS = ['chromium', 'firefox', 'thunderbird'] as const;
export type Target = (typeof TARGETS)[number];

/** pmf-chromium-1.2.0.zip for the Chrome Web Store, pmf-firefox-1.2.0.xpi for AMO, pmf-thunderbird-1.2.0.xpi for ATN. */
export function packageName(target: Target, version: string): string {
  return `pmf-${target}-${version}.${target === 'chromium' ? 'zip' : 'xpi'}`;
}

/** The permissions extension/README.md justifies, read from the repository at `root`. */
export function justifiedPermissions(root: string): Set<string> {
  return new Set(justifications(fs.readFileSync(path.join(root, 'extension/README.md'), 'utf8')).keys());
}

export class PackageRefused extends Error {}

/** The package of one target's unpacked build; throws PackageRefused naming every problem. */
export async function buildPackage(unpacked: string, target: Target, justified: ReadonlySet<string>): Promise<Buffer> {
  const entries = dirEntries(unpacked);
  const files = new Map(entries.map((e) => [e.name, Buffer.from(e.data)]));
  const problems = [...unwantedFiles(files), ...(target === 'chromium' ? chromeStoreProblems(files, justified) : [])];
  if (problems.length) throw new PackageRefused(`the ${target} package is refused:\n  ${problems.join('\n  ')}`);
  return writeZip(entries);
}
