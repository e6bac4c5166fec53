// Messages of the private functions between extension pages, the background
// and content scripts (the worker's own are in worker-protocol.ts).
import type { Cosigner, WitnessPolicy } from '../../protocol/witness-policy.js';
import type { BacklogProgress } from './backlog.js';
import type { SpamBadge } from './faults.js';
import type { ProviderHealth } from './provider-health.js';

/** From the options page and popup to the background. */
export type PrivateRequest =
  /** topics: the user's answer to "share each message's topic?", asked when connecting. */
  | { pmfPrivate: 'connect'; url: string; token: string; topics?: boolean }
  /** Connect from the mail address and its password (sign-in.ts); answers PrivateStatus, or {needsPermission: origin}. */
  | { pmfPrivate: 'signIn'; address: string; password: string; topics?: boolean }
  | { pmfPrivate: 'disconnect' }
  /** Changes the settings given (booleans only); the others stay. */
  | { pmfPrivate: 'settings'; spamCheck?: boolean; moveSpam?: boolean; topics?: boolean; linkCheck?: boolean }
  | { pmfPrivate: 'status' }
  /** The package log's state (log-status.ts); with `policy`, first sets the witness policy (null: the default). */
  | { pmfPrivate: 'packageLog'; policy?: WitnessPolicy | null };

/** What the options page shows of the provider's package log (log-section.ts). */
export interface PackageLogStatus {
  /** The connected provider's origin. */
  provider?: string;
  policy: WitnessPolicy;
  /** The built-in default policy is in use (the user set none). */
  defaultPolicy: boolean;
  /** The head this browser last accepted; absent before the first check. */
  head?: {
    size: number;
    /** size:first 32 hex of the root. */
    fingerprint: string;
    logKey: string;
    keySource: 'configured' | 'first-use';
    checkedAt: number;
    /** The policy's witnesses that cosigned it. */
    cosigners: Cosigner[];
  };
}

export interface PrivateStatus {
  connected: boolean;
  /** The provider's origin. */
  provider?: string;
  model?: { id: string; version: number; bytes: number; readyMs: number; downloaded: boolean };
  /** The model package download under way (bytes). */
  download?: { received: number; total: number };
  lastError?: { text: string; detail: string };
  /** Whether the provider answers (absent: it does, as far as is known). */
  health?: ProviderHealth;
  /** Messages kept for the provider while it cannot be reached. */
  held: number;
  /** Thunderbird: the check of mail not checked yet (after a start, an unlock, connecting) under way. */
  backlog?: BacklogProgress;
  classifiedToday: number;
  spamCheck: boolean;
  moveSpam: boolean;
  topics: boolean;
  linkCheck: boolean;
}

/** Content script → background: one-click connect from the webmail page (private/connect-offer.ts). */
export const WEBMAIL_CONNECT = 'pmfWebmailConnect';
export type WebmailConnectRequest =
  | { [WEBMAIL_CONNECT]: 'offer' }
  /**
   * provider: the provider's origin as the webmail's server named it; absent, the page's own origin.
   * topics: the user's answer, in the bar, to sharing each message's topic.
   */
  | { [WEBMAIL_CONNECT]: 'connect'; token: string; provider?: string; topics?: boolean }
  /** The background asks the page's own webmail server (Roundcube's pmf_connect, with the page's request token) for both. */
  | { [WEBMAIL_CONNECT]: 'roundcube'; action: string; requestToken: string; topics?: boolean };

/**
 * Background → content scripts of webmail tabs: the spam check just became
 * ready (connected, or the provider answers again): check the mailbox's
 * unchecked mail and offer the shown messages again.
 */
export const SPAM_CHECK_READY = { type: 'pmf-spam-check-ready' } as const;

/** storage.local key the background sets whenever the status changes: pages showing it refresh. */
export const STATUS_CHANGED = 'pmf-private-status-changed';

/**
 * Content script → background: which of these listed messages (MailSource ids)
 * the spam check has no outcome for yet; none while it is off or not connected.
 */
export const BACKLOG_UNCHECKED = 'pmfBacklogUnchecked';
export type BacklogRequest = { [BACKLOG_UNCHECKED]: string[] };
/** Bounds what one request may ask about. */
export const BACKLOG_MAX_IDS = 5000;

/**
 * Content script → background: the user said "not spam" about a listed or
 * shown message (MailSource id); kept with its stored verdict (PrivateStore.markByUser).
 */
export const USER_VERDICT = 'pmfUserVerdict';
export type UserVerdictRequest = { [USER_VERDICT]: string; spam: boolean };

/** Background → content script: the spam badge of one message view (MailSource.id). */
export const SPAM_BADGE = 'pmf-spam-badge';

export interface SpamBadgeMessage {
  type: typeof SPAM_BADGE;
  sourceId: string;
  badge: SpamBadge;
  /** A fresh spam verdict and the user lets the extension move spam: move it to Junk. */
  moveToJunk: boolean;
}
