// The release changelog from a real git history: the first-parent commits
// since the previous vX.Y.Z tag, a merged branch as one entry.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { changelog, previousTag } from '../release/changelog.js';
import { tempDir } from './temp-dir.js';

const repo = tempDir('pmf-changelog-');
const git = (...args: string[]) =>
  execFileSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.org', ...args], {
    cwd: repo,
    encoding: 'utf8',
  }).trim();
const commit = (subject: string) => {
  fs.appendFileSync(path.join(repo, 'f'), `${subject}\n`);
  git('add', 'f');
  git('commit', '-qm', subject);
  return git('rev-parse', '--short', 'HEAD');
};
const subjects = (log: string) => log.split('\n').filter((l) => l.startsWith('- '));

describe('changelog', () => {
  it('lists every commit when there is no release tag yet', () => {
    git('init', '-q', '-b', 'main');
    const first = commit('first');
    assert.equal(previousTag(repo), undefined);
    assert.equal(
      changelog(repo, '0.1.0'),
      `# Changes in 0.1.0\n\nCommits since the first commit (no earlier release tag), newest first:\n\n- first (${first})\n`,
    );
  });

  it('lists the commits since the newest earlier tag, a merged branch as its merge subject', () => {
    commit('before 0.9');
    git('tag', '-a', 'v0.9.0', '-m', 'v0.9.0');
    commit('before 0.10');
    git('tag', '-a', 'v0.10.0', '-m', 'v0.10.0'); // newer than v0.9.0 by version, not by text
    git('tag', 'not-a-release');
    const fix = commit('options: say why the key was refused');
    git('checkout', '-qb', 'search');
    commit('search: inner commit one');
    commit('search: inner commit two');
    git('checkout', '-q', 'main');
    git('merge', '-q', '--no-ff', 'search', '-m', 'Merge search: encrypted index kept in step');
    const merge = git('rev-parse', '--short', 'HEAD');
    assert.equal(previousTag(repo), 'v0.10.0');
    assert.deepEqual(subjects(changelog(repo, '0.11.0')), [
      `- encrypted index kept in step (search) (${merge})`,
      `- options: say why the key was refused (${fix})`,
    ]);
  });

  it('on a tagged release commit, describes that release: the range starts at the tag before', () => {
    git('tag', '-a', 'v0.11.0', '-m', 'v0.11.0');
    assert.equal(previousTag(repo), 'v0.10.0');
    assert.equal(subjects(changelog(repo, '0.11.0')).length, 2);
    const next = commit('after the release');
    assert.equal(previousTag(repo), 'v0.11.0');
    assert.deepEqual(subjects(changelog(repo, '0.12.0')), [`- after the release (${next})`]);
  });
});
