// Plain words for what the private spam check says on a message and on the
// options page: what happened and what to do next. The technical detail is
// kept apart, for a "details" disclosure.
import type { BlocklistHit } from '../../client/core/blocklist.js';
import type { FailureCode, ItemOutcome } from './worker-protocol.js';

/** What a message's spam badge shows. */
export interface SpamBadge {
  state: 'checking' | 'spam' | 'not-spam' | 'checked-before' | 'unavailable';
  text: string;
  detail?: string;
  /** Set once the message's topic went to the provider (the topic itself is never known here). */
  topicShared?: boolean;
  /** The link check's hits, one sentence each (blocklistLines). */
  blocklist?: string[];
}

/** The badge's text for a message treated as spam because of a blocklist hit alone. */
export const BLOCKLISTED = 'spam (on your provider’s blocklist, checked privately)';

/**
 * One sentence per hit, e.g. "A link in this message (evil.example) is on
 * your provider’s phishing list (since 2024-05-30, score 90)." A listed link
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
    const what = attachment
      ? 'An attachment of this message'
      : `A link in this message (${h.item.replace(/^(host|domain|url):/, '')})`;
    out.push(`${what} is on your provider’s ${h.category} list (since ${h.since}, score ${h.score}).`);
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
export const TOPIC_SHARED = 'Its topic was shared with your provider, which learns only the topic, not the message.';

export const CHECKING: SpamBadge = { state: 'checking', text: 'Checking for spam privately…' };

export const SLOWED: SpamBadge = {
  state: 'checking',
  text: 'Spam check waiting: your mail provider asked to slow down. It goes on by itself within a minute.',
};

export const LOCKED: SpamBadge = {
  state: 'unavailable',
  text: 'Spam check paused: your keys were locked. Unlock them and the message is checked when it is shown again.',
};

export const RECONNECTED: SpamBadge = {
  state: 'unavailable',
  text: 'Spam check not done: the connection to your provider changed. Reload the page to check it under the new one.',
};

const FAILURES: Record<FailureCode, string> = {
  provider_unreachable:
    'Spam check unavailable: your mail provider cannot be reached right now. The message is shown as usual; it will be checked when you open it again.',
  bad_token: 'Spam check off: the provider did not accept your access token. Connect again in the extension’s options.',
  package_tampered:
    'Spam check stopped: the spam model the provider sent failed its integrity check, so it was not used. Nothing about your mail was sent. Tell your provider.',
  package_log:
    'Spam check stopped: the provider’s published list of spam models does not vouch for this one, so it was not used. Nothing about your mail was sent. Tell your provider.',
  package_unwitnessed:
    'Spam check paused: not enough of the independent witnesses you rely on have confirmed that everyone gets this spam model, so it was not used. Nothing about your mail was sent. It is tried again when you open a message; if this lasts, see “Same spam model for everyone” in the extension’s options.',
  storage_full:
    'Spam check paused: the browser’s storage is full, so the spam model could not be saved. Free some space and reload.',
  rate_limited:
    'Spam check paused: your mail provider asked to slow down for longer than a minute. The message is checked when you open it again.',
  spam_off: 'Spam check is turned off in the extension’s options: nothing about your mail was sent.',
  protocol: 'Spam check failed for this message. The message is shown as usual.',
};

export function failureBadge(code: FailureCode, detail: string): SpamBadge {
  return { state: 'unavailable', text: FAILURES[code], detail };
}

export function failureText(code: FailureCode): string {
  return FAILURES[code];
}

/** A fresh outcome from the worker or one stored in IndexedDB (private/store.ts StoredVerdict). */
type Outcome =
  | { kind: 'verdict'; spam: boolean }
  | { kind: Exclude<ItemOutcome['kind'], 'verdict'>; detail?: string; final?: boolean };

/** A message whose check failed too often: given up on, so it never holds up the mail after it. */
export const NOT_CHECKED =
  'Not checked for spam: the check failed on this message several times, so it is not tried again. The message is shown as usual.';

export function outcomeBadge(o: Outcome & { user?: { spam: boolean } }): SpamBadge {
  // The user's own word wins over the check's, here (private/store.ts markByUser).
  if (o.user)
    return o.user.spam
      ? { state: 'spam', text: 'spam (you marked it)' }
      : { state: 'not-spam', text: 'not spam (you marked it)' };
  switch (o.kind) {
    case 'verdict':
      return o.spam ? { state: 'spam', text: 'spam (private check)' } : { state: 'not-spam', text: 'not spam' };
    case 'already_classified':
      return {
        state: 'checked-before',
        text: 'Spam check already done for this message (on another device or before a restart); its result was not kept here.',
        detail: o.detail,
      };
    case 'unknown_message':
      return {
        state: 'unavailable',
        text: 'Not checked for spam: your provider does not know this message.',
        detail: o.detail,
      };
    case 'failed':
      return { state: 'unavailable', text: o.final ? NOT_CHECKED : FAILURES.protocol, detail: o.detail };
  }
}
