// Plain words for what the private spam check says on a message and on the
// options page: what happened and what to do next. The technical detail is
// kept apart, for a "details" disclosure.
import type { BlocklistHit } from '../../client/core/blocklist.js';
import type { FailureCode, ItemOutcome } from './worker-protocol.js';

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
export const BLOCKLISTED = 'spam (on your provider’s blocklist, checked privately)';

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

/** Whether a badge is an outcome (the check is over for now), not a step on the way. */
export const isOutcome = (b: SpamBadge): boolean => b.state !== 'checking' && b.state !== 'waiting';

export const CHECKING: SpamBadge = { state: 'checking', text: 'Checking for spam privately…' };

/** The provider sets the pace (its per-user rate limit): the message is checked in its turn. */
export const PACED: SpamBadge = {
  state: 'waiting',
  paced: true,
  text: 'Waiting for your provider, which limits how fast mail is checked: this message is checked in its turn.',
};

/** The provider could not be reached: the message is kept and checked when it answers again (retried with backoff). */
export const PROVIDER_DOWN: SpamBadge = {
  state: 'waiting',
  text: 'Waiting for your provider: it cannot be reached right now. This message is checked as soon as it answers again.',
};

export const LOCKED: SpamBadge = {
  state: 'unavailable',
  text: 'Spam check paused: your keys were locked. Unlock them and the message is checked when it is shown again.',
};

export const RECONNECTED: SpamBadge = {
  state: 'unavailable',
  text: 'Spam check not done: the connection to your provider changed. Reload the page to check it under the new one.',
};

/** The provider is down and more messages wait than are kept for it: this one is checked when shown again. */
export const NOT_KEPT: SpamBadge = {
  state: 'unavailable',
  text: 'Not checked for spam yet: your provider cannot be reached, and too many messages are waiting for it. This one is checked when you open it again.',
};

/** Failures that pass by themselves: the messages wait for the provider and are tried again (provider-health.ts). */
export const isTransient = (code: FailureCode): boolean => code === 'provider_unreachable' || code === 'rate_limited';

const FAILURES: Record<FailureCode, string> = {
  provider_unreachable:
    'Waiting for your provider: it cannot be reached right now. Your mail is checked as soon as it answers again.',
  bad_token:
    'Spam check stopped: your provider no longer accepts this connection’s access token, so nothing is checked. Connect again under “Private spam filtering” in Private Mail Functions settings.',
  package_tampered:
    'Spam check stopped: the spam model the provider sent failed its integrity check, so it was not used. Nothing about your mail was sent. Tell your provider.',
  package_log:
    'Spam check stopped: the provider’s published list of spam models does not vouch for this one, so it was not used. Nothing about your mail was sent. Tell your provider.',
  package_unwitnessed:
    'Spam check paused: not enough of the independent witnesses you rely on have confirmed that everyone gets this spam model, so it was not used. Nothing about your mail was sent. It is tried again when you open a message; if this lasts, see “Same spam model for everyone” in Private Mail Functions settings.',
  storage_full:
    'Spam check paused: there is no room left to store the spam model on this device. Free some space and try again.',
  rate_limited:
    'Waiting for your provider, which limits how fast mail is checked. Your mail is checked as soon as it lets the add-on go on.',
  spam_off: 'Spam check is turned off in Private Mail Functions settings: nothing about your mail was sent.',
  protocol: 'Spam check failed for this message. The message is shown as usual.',
};

export function failureBadge(code: FailureCode, detail: string): SpamBadge {
  return { state: 'unavailable', text: FAILURES[code], detail };
}

export function failureText(code: FailureCode): string {
  return FAILURES[code];
}

/**
 * Why Connect failed, for the settings page: about the address and token
 * just typed, not about a message (nothing was checked yet).
 */
export function connectFailureText(code: FailureCode, origin: string): string {
  switch (code) {
    case 'provider_unreachable':
      return `No provider answers at ${origin}. Check the address, including the port number, and that your provider is running.`;
    case 'bad_token':
      return `The provider at ${origin} did not accept this access token. Check that you copied all of it, or ask your provider for a new one.`;
    case 'rate_limited':
      return `The provider at ${origin} asks to wait a moment before connecting again. Try again in a minute.`;
    default:
      return FAILURES[code];
  }
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
      // The provider's own words name the task ("…classified (spam)"), which reads like a verdict: not shown.
      return {
        state: 'checked-before',
        text: 'Checked for spam before, on another device or before this one was reset. Your provider gives each message one check, and its result was not kept here, so no verdict is shown.',
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

/**
 * What Thunderbird's banner says about a message's spam check: why it is
 * in Junk (the private verdict, or the blocklist hits with their lists and
 * dates), or what the check found.
 */
export function spamCheckLines(b: SpamBadge, inJunk: boolean, byUser: boolean): string[] {
  if (b.state === 'spam') {
    if (byUser) return ['You marked this message as spam.'];
    if (b.blocklist?.length)
      return [
        inJunk
          ? 'In Junk because of your provider’s blocklist, checked privately:'
          : 'On your provider’s blocklist, checked privately:',
        ...b.blocklist,
      ];
    return [
      inJunk
        ? 'In Junk because your provider’s private spam check found this message to be spam, without reading it.'
        : 'Your provider’s private spam check found this message to be spam, without reading it.',
    ];
  }
  if (b.state === 'not-spam')
    return [byUser ? 'You marked this message as not spam.' : 'Checked for spam privately: not spam.'];
  return [b.text];
}
