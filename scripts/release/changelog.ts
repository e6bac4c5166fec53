// The changelog of a release: the commits since the previous release tag
// (vX.Y.Z), read from git. Only first-parent history counts, so a merged
// branch is one entry (its merge subject, "Merge NAME: what it did"), and
// HEAD's own tag, when the release commit is already tagged, is the release
// being described rather than the previous one.
import { execFileSync } from 'node:child_process';

const git = (dir: string, ...args: string[]) =>
  execFileSync('git', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trimEnd();
const lines = (s: string) => s.split('\n').filter(Boolean);

/** The newest vX.Y.Z tag in HEAD's history other than a tag on HEAD itself. */
export function previousTag(dir: string): string | undefined {
  const atHead = new Set(lines(git(dir, 'tag', '--points-at', 'HEAD', '--list', 'v[0-9]*')));
  return lines(git(dir, 'tag', '--merged', 'HEAD', '--list', 'v[0-9]*', '--sort=-v:refname')).find(
    (t) => !atHead.has(t),
  );
}

export function changelog(dir: string, version: string): string {
  const since = previousTag(dir);
  const log = lines(git(dir, 'log', '--first-parent', '--format=%h%x09%s', since ? `${since}..HEAD` : 'HEAD'));
  const entries = log.map((line) => {
    const [hash, subject] = line.split('\t');
    const merge = /^Merge (?:branch '([^']+)'|(\S+?):)\s*(.*)$/.exec(subject);
    const what = merge ? `${merge[3] || 'merged'} (${merge[1] ?? merge[2]})` : subject;
    return `- ${what} (${hash})`;
  });
  const from = since ? `since ${since}` : 'since the first commit (no earlier release tag)';
  return `# Changes in ${version}\n\nCommits ${from}, newest first:\n\n${entries.join('\n')}\n`;
}
