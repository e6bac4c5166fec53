// What a backlog's progress says, in the webmail's bar (backlog-bar.ts) and
// in Thunderbird's status line (the popup and the settings page): how far it
// is, and while the provider sets the pace or cannot be reached, that the
// check waits for it and about how long the rest takes. One whole sentence
// per case, so each can be translated as it stands.
import type { BacklogProgress } from './backlog.js';
import { t } from '../lib/i18n.js';

/** "about 3 minutes left"; undefined until the pace is known. */
function timeLeft(ms: number | undefined): string | undefined {
  if (ms === undefined) return undefined;
  const minutes = Math.ceil(ms / 60_000);
  return minutes <= 1 ? t('backlog_minute_left') : t('backlog_minutes_left', minutes);
}

/** Where the spam moved to Junk, and the messages that got no answer, are said after the progress. */
function tail(p: BacklogProgress, moved: number): string {
  const junk = moved === 1 ? t('backlog_moved_one') : moved > 1 ? t('backlog_moved', moved) : '';
  const missed = p.unanswered ? t('backlog_unanswered', p.unanswered) : '';
  return [junk, missed].map((s) => (s ? ` ${s}` : '')).join('');
}

export function backlogText(p: BacklogProgress, moved = 0): string {
  const left = timeLeft(p.leftMs);
  switch (p.state) {
    case 'running':
      if (!p.paced) return t('backlog_running', p.done, p.total);
      return left ? t('backlog_paced_left', p.done, p.total, left) : t('backlog_paced', p.done, p.total);
    case 'waiting':
      return t('backlog_waiting', p.done, p.total, tail(p, moved));
    case 'paused':
      return t('backlog_paused', p.done, p.total, tail(p, moved));
    case 'locked':
      return t('backlog_locked', tail(p, moved));
    case 'done':
      return t('backlog_done', p.checked, p.total, tail(p, moved));
  }
}
