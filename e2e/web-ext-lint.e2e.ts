// `web-ext lint` (Mozilla's addons-linter) on the Firefox and Thunderbird
// builds: no errors, and no warnings beyond the known Thunderbird-only ones
// the Firefox linter cannot know about.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { distDir, ensureBuilt, root } from './fixtures/browser.js';

interface LintMessage {
  code: string;
  message: string;
}
interface LintReport {
  errors: LintMessage[];
  warnings: LintMessage[];
}

/** Thunderbird 128 permissions/keys unknown to the Firefox linter. */
const THUNDERBIRD_ONLY = new Set(['MANIFEST_PERMISSIONS', 'MISSING_DATA_COLLECTION_PERMISSIONS']);

function lint(target: 'firefox' | 'thunderbird'): LintReport {
  const args = [
    'web-ext',
    'lint',
    '--source-dir',
    distDir(target),
    '--output',
    'json',
    '--no-input',
    '--no-config-discovery',
  ];
  // No update check against the registry at test time.
  const res = spawnSync('npx', args, { cwd: root, encoding: 'utf8', env: { ...process.env, NO_UPDATE_NOTIFIER: '1' } });
  const json = res.stdout.slice(res.stdout.indexOf('{'));
  assert.ok(json.length > 0, `web-ext lint produced no report: ${res.stderr}`);
  return JSON.parse(json) as LintReport;
}

const describeAll = (msgs: LintMessage[]) => msgs.map((m) => `${m.code}: ${m.message}`).join('\n');

describe('web-ext lint', { timeout: 180_000 }, () => {
  it('passes on the Firefox build with no errors or warnings', () => {
    ensureBuilt();
    const r = lint('firefox');
    assert.deepEqual(r.errors, [], describeAll(r.errors));
    assert.deepEqual(r.warnings, [], describeAll(r.warnings));
  });

  it('passes on the Thunderbird build with no errors and only Thunderbird-specific warnings', () => {
    ensureBuilt();
    const r = lint('thunderbird');
    assert.deepEqual(r.errors, [], describeAll(r.errors));
    const unexpected = r.warnings.filter((w) => !THUNDERBIRD_ONLY.has(w.code));
    assert.deepEqual(unexpected, [], describeAll(unexpected));
    // Permission warnings only for Thunderbird's own (tb-schema.test.ts checks them against Thunderbird).
    for (const w of r.warnings.filter((x) => x.code === 'MANIFEST_PERMISSIONS'))
      assert.match(w.message, /messagesRead|accountsRead|messagesUpdate|messagesMove/);
  });
});
