// Classifies a list of messages against a provider, surviving provider
// restarts: on a dropped connection it reconnects (with backoff) and resumes
// at the first message without a verdict. A message is never classified
// twice: verdicts already recorded (e.g. in the CLI's results file) are
// skipped; a spam request whose answer was lost with the connection is
// re-sent as is, and its recorded answer evaluated
// (docs/protocol.md#exactly-once-verdicts), also after a restart of the
// client when the request was kept on the device (kept-requests.ts); if the
// provider says a message was already classified otherwise, it is reported
// as such, not retried.
//
// One message never stops the run: a failure of the message's own (it
// cannot be read or decrypted, or its content cannot be read into features:
// MessageFailure, message-failure.ts) is tried MESSAGE_ATTEMPTS times in
// all, then reported as `failed` with its reason, and the run goes on with
// the next message. Everything else is the run's: the provider's refusals
// (a request's size and shape do not depend on the message, so a refusal
// would repeat for every one), a lost connection past the reconnect window.
import { ProtocolError } from '../../protocol/errors.js';
import { MessageFailure } from './message-failure.js';
import { InterruptedRequest, retryable } from './interrupted-request.js';
import type { SpamVerdict } from './session.js';
import type { RunJournal } from './kept-requests.js';
import { ReplayRefused } from './topic-replay.js';

/** A session that classifies one message at a time (SpamSession, TopicSession). */
export interface Classifier<V> {
  classify(messageId: string, raw: string | Uint8Array, remaining: number): Promise<V>;
  /** Re-sends an interrupted request (spam_resend, topic_resend); undefined: classify anew. */
  resume?(interrupted: InterruptedRequest<{ messageId: string }>): Promise<V | undefined>;
  close(): void;
}

export interface RunItem {
  id: string;
  /** Decrypted RFC 822 message, produced lazily (decryption happens only when needed). */
  raw: () => Promise<string | Uint8Array>;
}

export type RunOutcome<V = SpamVerdict> =
  | ({ kind: 'verdict' } & V)
  | {
      kind: 'already_classified' | 'unknown_message' | 'failed' | 'replay_refused';
      messageId: string;
      detail: string;
    };

export interface RunOptions<V = SpamVerdict> {
  /** Opens a fresh session (downloading a newer model first if needed). */
  connect(remaining: number): Promise<Classifier<V>>;
  /** Ids that already have a recorded outcome. */
  done?: ReadonlySet<string>;
  onOutcome(o: RunOutcome<V>): void | Promise<void>;
  onReconnect?(attempt: number, error: Error): void;
  /** Give up after this long without being able to reconnect. */
  reconnectWindowMs?: number;
  /**
   * How long a provider that answers rate_limited is waited for. Its limits
   * count whole minutes, so a minute after the first refusal always falls in
   * a fresh count (docs/protocol.md#resource-limits).
   */
  rateLimitWaitMs?: number;
  /** Requests kept on the device (kept-requests.ts): an earlier run's are re-sent first, each forgotten once its outcome is stored. */
  journal?: RunJournal;
  /**
   * Leaves the last session open when every item got its outcome, for the
   * caller (who had it from connect) to reuse and close: one hello less.
   */
  keepOpen?: boolean;
}

/** A minute and a margin: see rateLimitWaitMs. */
export const RATE_LIMIT_WAIT_MS = 61_000;

/** Tries of a message that fails for a reason of its own before it is reported failed and skipped. */
export const MESSAGE_ATTEMPTS = 2;

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

export async function runClassification<V = SpamVerdict>(items: RunItem[], opts: RunOptions<V>): Promise<void> {
  const todo = items.filter((i) => !opts.done?.has(i.id));
  const journal = opts.journal;
  // A run that stopped between storing an outcome and forgetting the request leaves it behind.
  if (journal) for (const i of items) if (opts.done?.has(i.id)) await journal.forget(i.id);
  const settle = async (o: RunOutcome<V>, messageId: string): Promise<void> => {
    await opts.onOutcome(o);
    await journal?.forget(messageId);
  };
  let session: Classifier<V> | undefined;
  const window = opts.reconnectWindowMs ?? 60_000;
  const rateWait = opts.rateLimitWaitMs ?? RATE_LIMIT_WAIT_MS;
  try {
    for (let i = 0; i < todo.length; i++) {
      const item = todo[i];
      let interrupted: InterruptedRequest<{ messageId: string }> | undefined = await journal?.resume(item.id);
      // Read only when it is classified: a kept request's answer needs no message (its
      // topic may be resumed after the message itself is gone).
      let raw: string | Uint8Array | undefined;
      const read = async (): Promise<boolean> => {
        try {
          raw = await item.raw();
          return true;
        } catch (e) {
          await settle(
            { kind: 'failed', messageId: item.id, detail: `cannot read/decrypt: ${(e as Error).message}` },
            item.id,
          );
          return false;
        }
      };
      if (!interrupted && !(await read())) continue;
      let delay = 200;
      let limitedDelay = rateWait / 12; // 5 s at the default, then 10, 20 and the rest
      let firstFailure = 0;
      let attempt = 0;
      let rotations = 0;
      let ownFailures = 0;
      let verdict: V | undefined;
      for (;;) {
        try {
          session ??= await opts.connect(todo.length - i);
          let v: V | undefined;
          if (interrupted) {
            const resend = interrupted;
            interrupted = undefined;
            v = await session.resume?.(resend);
          }
          if (v === undefined && raw === undefined && !(await read())) break;
          verdict = v ?? (await session.classify(item.id, raw!, todo.length - i));
          break;
        } catch (caught) {
          let e = caught;
          if (e instanceof InterruptedRequest) {
            interrupted = e;
            e = e.reason;
          }
          if (e instanceof ReplayRefused) {
            await settle({ kind: 'replay_refused', messageId: item.id, detail: e.message }, item.id);
            break;
          }
          if (e instanceof ProtocolError && (e.code === 'already_classified' || e.code === 'unknown_message')) {
            await settle({ kind: e.code, messageId: item.id, detail: e.message }, item.id);
            break;
          }
          // Nothing was sent for it: the session is fine for another try and the next message.
          if (e instanceof MessageFailure) {
            if (++ownFailures < MESSAGE_ATTEMPTS) continue;
            await settle(
              { kind: 'failed', messageId: item.id, detail: `could not be classified: ${e.message}` },
              item.id,
            );
            break;
          }
          session?.close();
          session = undefined;
          // The user key reached its budget: the next session brings the next key.
          if (e instanceof ProtocolError && e.code === 'key_rotated' && ++rotations <= 3) continue;
          const limited = e instanceof ProtocolError && e.code === 'rate_limited';
          const transient = limited || retryable(e);
          const since = (firstFailure ||= Date.now());
          // At the deadline, not only past it: the last wait ends there, and a timer that fires
          // a millisecond early (Node's can) must not buy one more try.
          if (!transient || Date.now() - since >= (limited ? rateWait : window)) {
            interrupted?.dispose();
            throw e;
          }
          opts.onReconnect?.(++attempt, e as Error);
          if (limited) {
            // Refused hellos are not counted, but each still costs the provider: few, spaced tries up to the last one.
            await sleep(Math.max(0, Math.min(limitedDelay, since + rateWait - Date.now())) + 1);
            limitedDelay *= 2;
          } else {
            await sleep(delay);
            delay = Math.min(5000, delay * 2);
          }
        }
      }
      // Outside the loop: a failure to record the outcome is the run's, not the message's.
      if (verdict !== undefined) await settle({ kind: 'verdict', ...verdict }, item.id);
    }
    if (opts.keepOpen) session = undefined;
  } finally {
    session?.close();
  }
}
