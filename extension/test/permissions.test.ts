// Every permission a manifest asks for is justified, one row each, in
// extension/README.md's "Permissions" table, with the builds that ask for it
// (the Chrome Web Store asks for each justification; the release refuses a
// Chromium package with an unjustified one).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import { TARGETS } from '../../scripts/release/packages.js';
import { justificationProblems, justifications, requestedPermissions } from '../../scripts/release/store-rules.js';
// @ts-expect-error webpack.config.js is plain JS without types
import { targetManifest } from '../../webpack.config.js';

const base = JSON.parse(fs.readFileSync(new URL('../../manifest.json', import.meta.url), 'utf8'));
const readme = fs.readFileSync(new URL('../README.md', import.meta.url), 'utf8');

function askedBy(manifest: object): Map<string, string[]> {
  const asked = new Map<string, string[]>();
  for (const target of TARGETS)
    for (const p of requestedPermissions(targetManifest(manifest, target)))
      asked.set(p, [...(asked.get(p) ?? []), target]);
  return asked;
}

describe('permission justifications (extension/README.md, "Permissions")', () => {
  it('every permission of every build has a row with a reason and exactly the builds that ask for it', () => {
    const rows = justifications(readme);
    assert.ok(rows.size >= 10, `read ${rows.size} rows`);
    assert.deepEqual(justificationProblems(askedBy(base), rows), []);
  });

  it('a new permission without a row, a row gone and a row for nothing are each caught', () => {
    const more = { ...base, permissions: [...base.permissions, 'tabs'] };
    assert.deepEqual(justificationProblems(askedBy(more), justifications(readme)), [
      'tabs: asked for by chromium, firefox, thunderbird, not justified',
    ]);
    const noAlarms = readme.replace(/^\| `alarms`.*\n/m, '');
    assert.deepEqual(justificationProblems(askedBy(base), justifications(noAlarms)), [
      'alarms: asked for by chromium, firefox, thunderbird, not justified',
    ]);
    const fewer = { ...base, permissions: base.permissions.filter((p: string) => p !== 'offscreen') };
    assert.deepEqual(justificationProblems(askedBy(fewer), justifications(readme)), [
      'offscreen: justified, but no build asks for it',
    ]);
  });
});
