// How a request to the provider can fail and still be answered: the
// connection closed under it (ConnectionClosed), or a transient refusal
// (retryable). Such a request is kept (InterruptedRequest) so the next
// session re-sends it (spam_resend, topic_resend, docs/protocol.md#exactly-once-verdicts).
import { ProtocolError } from '../../protocol/errors.js';
import type { Messages } from '../../protocol/messages.js';
import type { PendingEvaluation } from '../../wasm/ts/gc.js';
import type { ReplayEntry } from './topic-replay.js';

/** A ProtocolError from the provider's error frame, or a closed connection. */
export class ConnectionClosed extends Error {
  constructor(message = 'connection to the provider closed') {
    super(message);
    this.name = 'ConnectionClosed';
  }
}

/**
 * A request whose answer did not arrive (connection lost, timeout, or a
 * transient refusal): the request and what the client needs to finish it are
 * kept so the next session can re-send it (spam_resend, topic_resend) and use
 * the recorded answer. For spam and for a topic_gc not yet received, that is
 * the evaluator's input labels (`pending`); for a topic whose labels were
 * sent but not acknowledged, the output labels. Secrets held here are in
 * memory only (kept-requests.ts keeps copies on the device); dispose() wipes them.
 */
export class InterruptedRequest<R extends { messageId: string } = Messages['spam_request']> extends Error {
  constructor(
    readonly reason: Error,
    readonly request: R,
    readonly pending: PendingEvaluation | undefined,
    /**
     * Topics: the output labels once evaluated, the replay-log entry, the local
     * guess to report. Both: the answer, when it had arrived before a stop
     * (kept-requests.ts).
     */
    readonly extra: { labels?: Uint8Array; replay?: ReplayEntry; localGuess?: string; answer?: Uint8Array } = {},
  ) {
    super(reason.message);
    this.name = 'InterruptedRequest';
  }

  dispose(): void {
    this.pending?.dispose();
    this.extra.labels?.fill(0);
  }
}

/** Whether a failed request may still be answered by the provider: worth re-sending on the next session. */
export const retryable = (e: unknown): boolean =>
  e instanceof ConnectionClosed || (e instanceof ProtocolError && RETRYABLE.has(e.code));

/**
 * Refusals after which a request may still have been answered, or can be
 * answered later: on a new session (session_lost: the provider lost this
 * one's OT state), or after a wait (ot_pool_full: the provider's memory for
 * OTs is taken).
 */
const RETRYABLE: ReadonlySet<string> = new Set(['rate_limited', 'internal', 'session_lost', 'ot_pool_full']);
