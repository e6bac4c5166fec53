// The typed messages between the background and the WASM worker that runs
// client/core (directly in Firefox/Thunderbird, through the offscreen
// document in Chromium). Plaintext crosses this line only inwards (the
// decrypted message to classify); what comes back is verdicts, whether a
// topic was shared, and progress.
import type { BlocklistHit } from '../../client/core/blocklist.js';
import type { ProviderConfig } from './account.js';

export interface ClassifyItem {
  /** The message id the provider delivered it under. */
  messageId: string;
  /** The decrypted RFC 822 message. */
  raw: string;
}

export type WorkerRequest =
  /** Downloads (or opens) the model and opens one session: proves URL, token and package. */
  | { kind: 'prepare'; provider: ProviderConfig }
  /**
   * The spam check, then (unless turned off) the link check (docs/blocklist.md)
   * and (unless the user opted out) topic extraction for the messages that got
   * a verdict. A message whose verdict is recorded is answered from IndexedDB.
   */
  /**
   * paceShare: how many workers share the provider's rate (worker-pool.ts); this one paces to its part.
   * resumeKept (default true): also resume the topic requests kept in IndexedDB; false while other
   * workers run, whose kept requests are in flight, not stopped.
   */
  | { kind: 'classify'; provider: ProviderConfig; items: ClassifyItem[]; paceShare?: number; resumeKept?: boolean }
  /** Tells the provider the user's topic-extraction choice (topic_setting, docs/protocol.md#topic-extraction). */
  | { kind: 'topic-setting'; provider: ProviderConfig; optOut: boolean }
  /** Forgets the open session and the loaded model (disconnect). */
  | { kind: 'reset' };

export type ItemOutcome =
  | { kind: 'verdict'; messageId: string; spam: boolean }
  | { kind: 'already_classified' | 'unknown_message'; messageId: string; detail: string }
  /** final: failed too often (private/store.ts FAILED_TRIES), not asked about again. */
  | { kind: 'failed'; messageId: string; detail: string; final?: boolean };

export interface PrepareResult {
  modelId: string;
  modelVersion: number;
  packageBytes: number;
  /** Time to a ready session: model opened from IndexedDB (or downloaded) and handshake, ms. */
  readyMs: number;
  /** Whether the package was downloaded (false: opened from IndexedDB). */
  downloaded: boolean;
}

/**
 * Topic extraction for one message: the provider learned its topic (shared),
 * the replay log refused to feed it again or the provider already had it
 * (shared before), or it failed. The
 * topic itself is the provider's to know, never the extension's.
 */
export type TopicOutcome = { messageId: string; kind: 'shared' | 'shared_before' | 'failed'; detail?: string };

/**
 * The link check of one message: the items of it on the provider's blocklist
 * with their records (none: nothing to show, whatever the reason in `detail`:
 * not listed, looked up before, no list published, provider down).
 */
export interface BlocklistOutcome {
  messageId: string;
  hits: BlocklistHit[];
  detail?: string;
}

/** Events the worker sends while a request runs. */
export type WorkerEvent =
  | { event: 'download'; received: number; total: number }
  | { event: 'outcome'; outcome: ItemOutcome }
  | { event: 'blocklist'; blocklist: BlocklistOutcome }
  | { event: 'topic'; topic: TopicOutcome }
  /** The provider asked to slow down: the spam check waits (at most a minute) and goes on. */
  | { event: 'slowed' };

/** A failure, named for the user message (private/faults.ts). */
export interface WorkerFailure {
  code: FailureCode;
  detail: string;
}

export type FailureCode =
  | 'provider_unreachable'
  | 'bad_token'
  | 'package_tampered'
  | 'package_log'
  /** Fewer witnesses than the user's policy cosigned the package log's head (often passing). */
  | 'package_unwitnessed'
  | 'storage_full'
  | 'rate_limited'
  /** The user turned the spam check off: the worker refuses before anything is sent. */
  | 'spam_off'
  | 'protocol';

export type WorkerEnvelope =
  | { id: number; request: WorkerRequest }
  | { id: number; event: WorkerEvent }
  | { id: number; done: unknown }
  | { id: number; failed: WorkerFailure };

/** What each request kind answers. */
export interface WorkerResults {
  prepare: PrepareResult;
  classify: null;
  'topic-setting': null;
  reset: null;
}
