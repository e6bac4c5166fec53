// What a backlog's progress says, in the webmail's bar (backlog-bar.ts) and
// in Thunderbird's status line (the popup and the settings page): how far it
// is, and while the provider sets the pace or cannot be reached, that the
// check waits for it and about how long the rest takes. One whole sentence
// per case, so each can be translated as it stands.
import type { BacklogProgress } from './backlog.js';

/** "about 3 minutes left"; undefined until the pace is known. */
function timeLeft(ms: number | undefined): string | undefined {
  if (ms === undefined) return undefined;
  const minutes = Math.ceil(ms / 60_000);
  return minutes <= 1 ? 'about 1 minute left' : `about ${minutes} minutes left`;
}

/** Where the spam moved to Junk, and the messages that got no answer, are said after the progress. */
function tail(p: BacklogProgress, moved: number): string {
  const junk = moved === 1 ? ' 1 moved to Junk.' : moved > 1 ? ` ${moved} moved to Junk.` : '';
  const missed = p.unanswered ? ` ${p.unanswered} got no answer; they are checked when you open them.` : '';
  return junk + missed;
}

export function backlogText(p: BacklogProgress, moved = 0): string {
  const left = timeLeft(p.leftMs);
  switch (p.state) {
    case 'running':
      if (!p.paced) return `Checking your new mail for spam privately: ${p.done} of ${p.total}…`;
      return left
        ? `Waiting for your provider, which limits how fast mail is checked (${p.done} of ${p.total}, ${left}).`
        : `Waiting for your provider, which limits how fast mail is checked (${p.done} of ${p.total}).`;
    case 'waiting':
      return `Waiting for your provider: it cannot be reached right now (${p.done} of ${p.total} done). The rest is checked as soon as it answers again.${tail(p, moved)}`;
    case 'paused':
      return `Spam check paused: ${p.done} of ${p.total} done.${tail(p, moved)}`;
    case 'locked':
      return `Spam check paused: your key is locked. Unlock it with the Private Mail Functions button in the toolbar, then resume.${tail(p, moved)}`;
    case 'done':
      return `Checked ${p.checked} of ${p.total} new messages for spam privately.${tail(p, moved)}`;
  }
}
