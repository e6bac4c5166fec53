// The client side of private spam classification (docs/protocol.md#spam-classification):
// per email docs/crypto.md#extraction-pipeline on the device, spam_request,
// garbled evaluation, spam_done (the session itself: provider-session.ts;
// topics: topic-session.ts). A spam request whose answer was lost with the
// connection is re-sent as is on the next session (spam_resend,
// docs/protocol.md#exactly-once-verdicts).
import { ProtocolError } from '../../protocol/errors.js';
import type { Messages } from '../../protocol/messages.js';
import { extractFeatures } from '../../models/features/index.js';
import { evaluateSpam, spamChoice, type PendingEvaluation } from '../../wasm/ts/gc.js';
import { fromMessage } from './message-failure.js';
import { InterruptedRequest } from './interrupted-request.js';
import { ProviderSession, type SessionOptions } from './provider-session.js';

export interface SpamVerdict {
  messageId: string;
  spam: boolean;
  /** The model's label for the verdict ("spam" / "ham"). */
  label: string;
  /**
   * Local only: the garbled output was not a valid label. The verdict is then
   * "not spam", exactly as for a valid result, and the provider is told
   * nothing different (selective-failure probes, docs/crypto.md#garbled-circuits).
   */
  invalidOutput: boolean;
  /** Client CPU time for this email (features, dot product, extraction, evaluation), ms. */
  clientMs: number;
  bytesSent: number;
  bytesReceived: number;
}

export class SpamSession extends ProviderSession {
  protected readonly otsPerEmail = this.opts.model.params.T;

  static open(opts: SessionOptions): Promise<SpamSession> {
    return ProviderSession.connect(opts, (ws) => new SpamSession(ws, opts));
  }

  /**
   * Classifies one delivered message privately. `raw` is the decrypted RFC 822
   * message (its plaintext never leaves this function); `remaining` sizes pool top-ups.
   */
  async classify(messageId: string, raw: string | Uint8Array, remaining = 1): Promise<SpamVerdict> {
    const { model, params, spec } = this.opts.model;
    this.alive();
    const sent0 = this.sent;
    const recv0 = this.received;
    let cpu = performance.now();
    const features = await fromMessage(() =>
      extractFeatures(raw, spec, (w) => this.opts.onMessageWarning?.(messageId, w)),
    );
    this.alive();
    const acc = model.dot(features);
    let lwe: Uint8Array;
    let mask: number;
    let cost: bigint;
    try {
      cost = model.floodDistance(acc);
      [{ lwe, mask }] = model.extract(acc, [0], this.pk!, this.ksk!);
    } finally {
      acc.dispose();
      features.counts.fill(0);
      features.rows.fill(0);
    }
    await this.opts.flood?.charge(cost); // refused: the ciphertext never leaves
    const modT = 2 ** params.T;
    const rPrime = (modT - mask) % modT;
    mask = 0;
    cpu = performance.now() - cpu;
    await this.ensureOts(remaining);
    const t0 = performance.now();
    const { message: choices, pending } = spamChoice(this.receiver!, { rPrime, T: params.T });
    cpu += performance.now() - t0;
    const request = { messageId, lwe, choices };
    // Kept before it leaves: a client that stops from here on re-sends it at its next run.
    await this.keep(request, pending);
    const gc = await this.garbledFor(
      'spam_request',
      request,
      pending,
      (e) => new InterruptedRequest(e, request, pending),
    );
    return this.evaluated(request, pending, gc, cpu, sent0, recv0);
  }

  /**
   * Keeps the request and its labels on the device (kept-requests.ts), with
   * the answer once it arrived: evaluated again after a stop, the same
   * answer gives the same verdict, where asking again could bring another
   * circuit for the same input labels.
   */
  private async keep(
    request: Messages['spam_request'],
    pending: PendingEvaluation,
    answer?: Uint8Array,
  ): Promise<void> {
    const store = this.opts.kept;
    if (store) await pending.keepWith((evaluation) => store.put(request.messageId, { request, evaluation, answer }));
  }

  /**
   * The verdict from an answer; an answer that does not evaluate is not kept
   * to be tried again. `fromDevice`: the answer a run before a stop kept,
   * which this session never received, so it has nothing to acknowledge.
   */
  private async evaluated(
    request: Messages['spam_request'],
    pending: PendingEvaluation,
    gc: Uint8Array,
    cpu: number,
    sent0: number,
    recv0: number,
    fromDevice = false,
  ): Promise<SpamVerdict> {
    if (!fromDevice) await this.keep(request, pending, gc);
    try {
      return this.verdict(request.messageId, pending, gc, cpu, sent0, recv0, !fromDevice);
    } catch (e) {
      await this.opts.kept?.delete(request.messageId);
      throw e;
    }
  }

  /**
   * Re-sends a request whose answer was lost (spam_resend) and evaluates the
   * recorded answer with the labels kept for it; undefined when no answer
   * ever left the provider (the message is then classified anew).
   */
  async resume(interrupted: InterruptedRequest): Promise<SpamVerdict | undefined> {
    this.alive();
    const { request, pending } = interrupted;
    if (!pending) throw new Error('resume: a spam request is always kept with its pending evaluation');
    const sent0 = this.sent;
    const recv0 = this.received;
    const answer = interrupted.extra.answer;
    if (answer) return this.evaluated(request, pending, answer, 0, sent0, recv0, true);
    let gc: Uint8Array;
    try {
      gc = await this.garbledFor('spam_resend', request, pending, (e) => new InterruptedRequest(e, request, pending));
    } catch (e) {
      if (e instanceof ProtocolError && e.code === 'not_answered') return undefined;
      throw e;
    }
    return this.evaluated(request, pending, gc, 0, sent0, recv0);
  }

  private verdict(
    messageId: string,
    pending: PendingEvaluation,
    gc: Uint8Array,
    cpu: number,
    sent0: number,
    recv0: number,
    acknowledge: boolean,
  ): SpamVerdict {
    const t0 = performance.now();
    const result = evaluateSpam(pending, gc);
    cpu += performance.now() - t0;
    try {
      if (acknowledge) this.sendFrame('spam_done', this.nextRequest++, { messageId });
    } catch {
      // The verdict is ours already; the provider just keeps its recorded copy.
    }
    if (result.invalid) this.opts.onInvalidOutput?.(messageId);
    const labels = this.opts.model.header.labels;
    return {
      messageId,
      spam: result.spam,
      label: labels[result.spam ? 1 : 0] ?? (result.spam ? 'spam' : 'ham'),
      invalidOutput: result.invalid,
      clientMs: cpu,
      bytesSent: this.sent - sent0,
      bytesReceived: this.received - recv0,
    };
  }
}
