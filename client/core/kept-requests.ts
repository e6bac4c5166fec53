// Spam and topic requests kept on the device from just before they are sent
// until their outcome is stored (docs/protocol.md#exactly-once-verdicts).
// The provider records each answer before it sends it, and answers the same
// request sent again (spam_resend, topic_resend) with those bytes; but they
// are useless without the evaluator's input labels, which only this client
// has. Held in memory alone, they die with a client that stops while an
// answer is on its way (a closed browser, a killed process), and the message
// is then "already classified" for good, without a verdict (or, for a topic,
// refused by the replay log without ever being shared). Kept here, the next
// run re-sends the request and evaluates the recorded answer. An answer that
// arrived is kept too, before it is evaluated: after a stop the same answer
// is evaluated again, never a second one for the same input labels.
import type { Messages } from '../../protocol/messages.js';
import type { WasmCore } from '../../wasm/ts/core.js';
import { PendingEvaluation, type KeptEvaluation } from '../../wasm/ts/gc.js';
import { ConnectionClosed, InterruptedRequest } from './interrupted-request.js';
import type { ReplayEntry } from './topic-replay.js';

/**
 * How long an unsettled request (or blinding key) is kept: a message never
 * checked again leaves it behind, and after the provider's default answer
 * retention (7 days) a resend could not be answered anyway.
 */
export const KEPT_FOR_MS = 7 * 86_400_000;

/** One spam request as sent, what its answer is evaluated with, and the answer once it arrived. */
export interface KeptSpamRequest {
  request: Messages['spam_request'];
  evaluation: KeptEvaluation;
  answer?: Uint8Array;
}

/** One topic request as sent, likewise, with its replay-log entry and the local guess to report. */
export interface KeptTopicRequest {
  request: Messages['topic_request'];
  evaluation: KeptEvaluation;
  replay: ReplayEntry;
  localGuess: string;
  answer?: Uint8Array;
}

/**
 * Where one user's kept requests of one kind live, by message id: the
 * extension's IndexedDB, a directory for the CLI. `put` stores a copy (the
 * caller wipes its own) and resolves once it is stored.
 */
export interface KeptStore<R> {
  get(messageId: string): Promise<R | undefined>;
  put(messageId: string, kept: R): Promise<void>;
  delete(messageId: string): Promise<void>;
}
export type KeptRequests = KeptStore<KeptSpamRequest>;
export type KeptTopicRequests = KeptStore<KeptTopicRequest>;

/** What a run (runner.ts) does with kept requests. */
export interface RunJournal {
  /** The request an earlier run kept for this message, ready to re-send; undefined if none. */
  resume(messageId: string): Promise<InterruptedRequest<{ messageId: string }> | undefined>;
  /** Drops the message's kept request: its outcome is stored. */
  forget(messageId: string): Promise<void>;
}

const bytes = (b: unknown): b is Uint8Array => b instanceof Uint8Array;

/**
 * A journal over kept records: `restore` turns one into the interrupted
 * request to re-send, or throws on a damaged record, which is then dropped
 * and the message asked anew (reported already classified if its answer was
 * recorded).
 */
function journal<R>(
  kept: KeptStore<R>,
  restore: (k: R, messageId: string) => InterruptedRequest<{ messageId: string }>,
): RunJournal {
  return {
    async resume(messageId) {
      const k = await kept.get(messageId);
      if (!k) return undefined;
      try {
        return restore(k, messageId);
      } catch {
        await kept.delete(messageId);
        return undefined;
      }
    },
    forget: (messageId) => kept.delete(messageId),
  };
}

const stopped = () => new ConnectionClosed('the client stopped before this answer arrived');

/** The journal of kept spam requests. */
export function runJournal(core: WasmCore, kept: KeptRequests): RunJournal {
  return journal(kept, ({ request, evaluation, answer }, messageId) => {
    if (request?.messageId !== messageId || !bytes(request.lwe))
      throw new RangeError('the request is not this message’s');
    if (!bytes(request.choices)) throw new RangeError('the request has no choices');
    if (answer !== undefined && !bytes(answer)) throw new RangeError('the answer is not bytes');
    const pending = PendingEvaluation.restore(core, evaluation, 'spam');
    return new InterruptedRequest(stopped(), request, pending, { answer });
  });
}

/** The journal of kept topic requests. */
export function topicJournal(core: WasmCore, kept: KeptTopicRequests): RunJournal {
  return journal(kept, ({ request, evaluation, replay, localGuess, answer }, messageId) => {
    if (request?.messageId !== messageId || !bytes(request.lwes))
      throw new RangeError('the request is not this message’s');
    if (!bytes(request.choices)) throw new RangeError('the request has no choices');
    if (replay?.messageId !== messageId || typeof replay.contentHash !== 'string')
      throw new RangeError('the replay entry is not this message’s');
    if (typeof localGuess !== 'string') throw new RangeError('the local guess is not text');
    if (answer !== undefined && !bytes(answer)) throw new RangeError('the answer is not bytes');
    const pending = PendingEvaluation.restore(core, evaluation, 'argmax');
    return new InterruptedRequest(stopped(), request, pending, { replay, localGuess, answer });
  });
}
