// Whether the provider answers, kept with the connection (PrivateStore
// config "health") so that a restarted background, the popup and the
// settings page all say the same thing: the add-on is waiting for the
// provider (it cannot be reached, or it limits the pace) and tries again at
// a given time, or the provider refused the access token and the user must
// connect again. Tries back off from seconds to a quarter of an hour: a
// provider that is down for a day costs it about a hundred connection
// attempts per user, and mail that arrived meanwhile is checked within
// minutes of its return. Pure: the background keeps it and sets the alarm.
import { isTransient } from './faults.js';
import type { WorkerFailure } from './worker-protocol.js';
import { t } from '../lib/i18n.js';

export type ProviderHealth =
  | {
      state: 'waiting';
      /** unreachable: nothing answered; paced: it asked to slow down for longer than the runner waits. */
      why: 'unreachable' | 'paced';
      since: number;
      /** Tries since it stopped answering (0: the first failure). */
      attempt: number;
      retryAt: number;
      detail: string;
    }
  | { state: 'refused'; since: number; detail: string };

/** The alarm that wakes a stopped background for the next try. */
export const RETRY_ALARM = 'pmf-provider-retry';

/** The waits before each try while the provider is down; the last one repeats. */
export const RETRY_MS = [15_000, 30_000, 60_000, 120_000, 300_000, 900_000];

/**
 * The health after a batch failed. A refused token stops everything until
 * the user connects again; a transient failure means waiting, one step
 * longer each time; any other failure is the message's or the package's,
 * and says nothing about whether the provider answers.
 */
export function afterFailure(
  prev: ProviderHealth | undefined,
  f: WorkerFailure,
  now: number,
): ProviderHealth | undefined {
  if (f.code === 'bad_token')
    return { state: 'refused', since: prev?.state === 'refused' ? prev.since : now, detail: f.detail };
  if (!isTransient(f.code)) return prev;
  const before = prev?.state === 'waiting' ? prev : undefined;
  const attempt = before ? before.attempt + 1 : 0;
  return {
    state: 'waiting',
    why: f.code === 'rate_limited' ? 'paced' : 'unreachable',
    since: before?.since ?? now,
    attempt,
    retryAt: now + RETRY_MS[Math.min(attempt, RETRY_MS.length - 1)],
    detail: f.detail,
  };
}

const time = (ms: number) => new Date(ms).toLocaleTimeString([], { hour: '2-digit', minute: '2-digit' });

/**
 * The status line for the popup and the settings page. `waiting`: how many
 * messages the add-on keeps for the provider, when it knows.
 */
export function healthText(h: ProviderHealth, where: 'popup' | 'settings', waiting = 0): string {
  if (h.state === 'refused')
    return where === 'settings' ? t('health_refused_settings', time(h.since)) : t('health_refused');
  const kept = waiting === 1 ? t('health_kept_one') : waiting > 1 ? t('health_kept', waiting) : t('health_kept_none');
  return h.why === 'paced'
    ? t('health_paced', kept, time(h.retryAt))
    : t('health_down', time(h.since), kept, time(h.retryAt));
}
