// Spam requests kept on the device from just before they are sent until
// their outcome is stored (docs/protocol.md#exactly-once-verdicts). The
// provider records each answer before it sends it, and answers the same
// request sent again (spam_resend) with those bytes; but they are useless
// without the evaluator's input labels, which only this client has. Held in
// memory alone, they die with a client that stops while an answer is on its
// way (a closed browser, a killed process), and the message is then "already
// classified" for good, without a verdict. Kept here, the next run re-sends
// the request and evaluates the recorded answer. An answer that arrived is
// kept too, before it is evaluated: after a stop the same answer is
// evaluated again, never a second one for the same input labels.
import type { Messages } from '../../protocol/messages.js';
import type { WasmCore } from '../../wasm/ts/core.js';
import { PendingEvaluation, type KeptSpamEvaluation } from '../../wasm/ts/gc.js';
import { ConnectionClosed, InterruptedRequest } from './session.js';

/**
 * How long an unsettled request (or blinding key) is kept: a message never
 * checked again leaves it behind, and after the provider's default answer
 * retention (7 days) a resend could not be answered anyway.
 */
export const KEPT_FOR_MS = 7 * 86_400_000;

/** One spam request as sent, what its answer is evaluated with, and the answer once it arrived. */
export interface KeptSpamRequest {
  request: Messages['spam_request'];
  evaluation: KeptSpamEvaluation;
  answer?: Uint8Array;
}

/**
 * Where one user's kept requests live, by message id: the extension's
 * IndexedDB, a directory for the CLI. `put` stores a copy (the caller wipes
 * its own) and resolves once it is stored.
 */
export interface KeptRequests {
  get(messageId: string): Promise<KeptSpamRequest | undefined>;
  put(messageId: string, kept: KeptSpamRequest): Promise<void>;
  delete(messageId: string): Promise<void>;
}

/** What a run (runner.ts) does with kept requests. */
export interface RunJournal {
  /** The request an earlier run kept for this message, ready to re-send; undefined if none. */
  resume(messageId: string): Promise<InterruptedRequest | undefined>;
  /** Drops the message's kept request: its outcome is stored. */
  forget(messageId: string): Promise<void>;
}

export function runJournal(core: WasmCore, kept: KeptRequests): RunJournal {
  return {
    async resume(messageId) {
      const k = await kept.get(messageId);
      if (!k) return undefined;
      let pending: PendingEvaluation;
      try {
        const { request } = k;
        if (request?.messageId !== messageId || !(request.lwe instanceof Uint8Array))
          throw new RangeError('the request is not this message’s');
        if (!(request.choices instanceof Uint8Array)) throw new RangeError('the request has no choices');
        if (k.answer !== undefined && !(k.answer instanceof Uint8Array))
          throw new RangeError('the answer is not bytes');
        pending = PendingEvaluation.restore(core, k.evaluation);
      } catch {
        // A damaged record cannot be evaluated: the message is asked anew (and
        // is reported already classified if its answer was recorded).
        await kept.delete(messageId);
        return undefined;
      }
      const reason = new ConnectionClosed('the client stopped before this answer arrived');
      return new InterruptedRequest(reason, k.request, pending, { answer: k.answer });
    },
    forget: (messageId) => kept.delete(messageId),
  };
}
