// `npm run verify-release -- PACKAGE INSTALLED`: is the add-on installed in
// a browser the release? PACKAGE is a store package from `npm run release`
// (built from the release's tag); INSTALLED is the installed copy: the
// extension's folder in a Chromium profile, the .xpi in a Firefox or
// Thunderbird profile, or a .crx/.xpi downloaded from a store. Exit 0 when
// every file of the release is in the installed copy byte for byte and the
// copy has nothing else but what the store adds (scripts/release/verify.ts).
import { compare, readInstalled } from './release/verify.js';

const [pkg, installed] = process.argv.slice(2);
if (!pkg || !installed) {
  console.error('usage: npm run verify-release -- PACKAGE INSTALLED (README.md: "Checking an installed add-on")');
  process.exit(2);
}
const result = compare(await readInstalled(pkg), await readInstalled(installed));
if (result.storeAdded.length) console.log(`set aside, added by the store: ${result.storeAdded.join(', ')}`);
if (result.differences.length) {
  console.log(`NOT the release: ${result.differences.length} difference(s)\n  ${result.differences.join('\n  ')}`);
  process.exit(1);
}
console.log(`the installed add-on is the release: all ${result.same} files match ${pkg}`);
