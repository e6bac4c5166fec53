// Plain words for what the private spam check says on a message and on the
// options page: what happened and what to do next. The technical detail is
// kept apart, for a "details" disclosure.
import type { BlocklistHit } from '../../client/core/blocklist.js';
import type { FailureCode, ItemOutcome } from './worker-protocol.js';
import { t, type MessageKey } from '../lib/i18n.js';

/**
 * What a message's spam badge shows. 'checking' and 'waiting' are not an
 * outcome: the check goes on (waiting: for the provider, which is down or
 * sets the pace), and an outcome follows.
 */
export interface SpamBadge {
  state: 'checking' | 'waiting' | 'spam' | 'not-spam' | 'checked-before' | 'unavailable';
  text: string;
  detail?: string;
  /** Set once the message's topic went to the provider (the topic itself is never known here). */
  topicShared?: boolean;
  /** The link check's hits, one sentence each (blocklistLines). */
  blocklist?: string[];
  /** Waiting because the provider sets the pace (its rate limit), not because it is down. */
  paced?: boolean;
}

/** The badge's text for a message treated as spam because of a blocklist hit alone. */
export const BLOCKLISTED = t('spam_blocklisted');

/**
 * One sentence per hit, e.g. "A link in this message (evil.example) is on
 * your provider’s phishing list (since <date>, score 90)." A listed link
 * usually hits as domain and host both: one sentence per kind, list and date.
 */
export function blocklistLines(hits: readonly BlocklistHit[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const h of hits) {
    const attachment = h.item.startsWith('sha256:');
    const key = `${attachment}|${h.category}|${h.since}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(
      attachment
        ? t('spam_hit_attachment', h.category, h.since, h.score)
        : t('spam_hit_link', h.item.replace(/^(host|domain|url):/, ''), h.category, h.since, h.score),
    );
  }
  return out;
}

/**
 * Adds the link check's hits to a badge: a message with a hit is treated as
 * spam (and so moved to Junk when the user lets the extension move spam),
 * the hit being the reason shown. No hit: the badge as it was.
 */
export function withBlocklist(badge: SpamBadge, hits: readonly BlocklistHit[]): SpamBadge {
  if (hits.length === 0) return badge;
  const lines = blocklistLines(hits);
  return badge.state === 'spam'
    ? { ...badge, blocklist: lines }
    : { ...badge, state: 'spam', text: BLOCKLISTED, detail: undefined, blocklist: lines };
}

/** The line under a badge whose message's topic was shared. */
export const TOPIC_SHARED = t('spam_topic_shared');

/** Whether a badge is an outcome (the check is over for now), not a step on the way. */
export const isOutcome = (b: SpamBadge): boolean => b.state !== 'checking' && b.state !== 'waiting';

export const CHECKING: SpamBadge = { state: 'checking', text: t('spam_checking') };

/** The provider sets the pace (its per-user rate limit): the message is checked in its turn. */
export const PACED: SpamBadge = {
  state: 'waiting',
  paced: true,
  text: t('spam_paced'),
};

/** The provider could not be reached: the message is kept and checked when it answers again (retried with backoff). */
export const PROVIDER_DOWN: SpamBadge = {
  state: 'waiting',
  text: t('spam_provider_down'),
};

export const LOCKED: SpamBadge = {
  state: 'unavailable',
  text: t('spam_locked'),
};

export const RECONNECTED: SpamBadge = {
  state: 'unavailable',
  text: t('spam_reconnected'),
};

/** The provider is down and more messages wait than are kept for it: this one is checked when shown again. */
export const NOT_KEPT: SpamBadge = {
  state: 'unavailable',
  text: t('spam_not_kept'),
};

/** Failures that pass by themselves: the messages wait for the provider and are tried again (provider-health.ts). */
export const isTransient = (code: FailureCode): boolean => code === 'provider_unreachable' || code === 'rate_limited';

const FAILURES: Record<FailureCode, MessageKey> = {
  provider_unreachable: 'spam_fail_unreachable',
  bad_token: 'spam_fail_bad_token',
  package_tampered: 'spam_fail_tampered',
  package_log: 'spam_fail_log',
  package_unwitnessed: 'spam_fail_unwitnessed',
  storage_full: 'spam_fail_storage',
  rate_limited: 'spam_fail_rate',
  spam_off: 'spam_fail_off',
  protocol: 'spam_fail_protocol',
};

export function failureBadge(code: FailureCode, detail: string): SpamBadge {
  return { state: 'unavailable', text: failureText(code), detail };
}

export function failureText(code: FailureCode): string {
  return t(FAILURES[code]);
}

/**
 * Why Connect failed, for the settings page: about the address and token
 * just typed, not about a message (nothing was checked yet).
 */
export function connectFailureText(code: FailureCode, origin: string): string {
  switch (code) {
    case 'provider_unreachable':
      return t('spam_connect_unreachable', origin);
    case 'bad_token':
      return t('spam_connect_bad_token', origin);
    case 'rate_limited':
      return t('spam_connect_rate', origin);
    default:
      return failureText(code);
  }
}

/** A fresh outcome from the worker or one stored in IndexedDB (private/store.ts StoredVerdict). */
type Outcome =
  | { kind: 'verdict'; spam: boolean }
  | { kind: Exclude<ItemOutcome['kind'], 'verdict'>; detail?: string; final?: boolean };

/** A message whose check failed too often: given up on, so it never holds up the mail after it. */
export const NOT_CHECKED = t('spam_not_checked');

export function outcomeBadge(o: Outcome & { user?: { spam: boolean } }): SpamBadge {
  // The user's own word wins over the check's, here (private/store.ts markByUser).
  if (o.user)
    return o.user.spam ? { state: 'spam', text: t('spam_user_spam') } : { state: 'not-spam', text: t('spam_user_ham') };
  switch (o.kind) {
    case 'verdict':
      return o.spam
        ? { state: 'spam', text: t('spam_verdict_spam') }
        : { state: 'not-spam', text: t('spam_verdict_ham') };
    case 'already_classified':
      // The provider's own words name the task ("…classified (spam)"), which reads like a verdict: not shown.
      return {
        state: 'checked-before',
        text: t('spam_checked_before'),
      };
    case 'unknown_message':
      return {
        state: 'unavailable',
        text: t('spam_unknown_message'),
        detail: o.detail,
      };
    case 'failed':
      return { state: 'unavailable', text: o.final ? NOT_CHECKED : failureText('protocol'), detail: o.detail };
  }
}

/**
 * What Thunderbird's banner says about a message's spam check: why it is
 * in Junk (the private verdict, or the blocklist hits with their lists and
 * dates), or what the check found.
 */
export function spamCheckLines(b: SpamBadge, inJunk: boolean, byUser: boolean): string[] {
  if (b.state === 'spam') {
    if (byUser) return [t('spam_line_user_spam')];
    if (b.blocklist?.length) return [t(inJunk ? 'spam_line_junk_blocklist' : 'spam_line_blocklist'), ...b.blocklist];
    return [t(inJunk ? 'spam_line_junk_verdict' : 'spam_line_verdict')];
  }
  if (b.state === 'not-spam') return [t(byUser ? 'spam_line_user_ham' : 'spam_line_ham')];

  return [b.text];
}
