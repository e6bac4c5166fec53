// The client side of the session protocol (docs/protocol.md#spam-classification): hello →
// welcome (p0 checked against the joint seed), OT base + extension (pool
// sized to the pending work, topped up on demand) in ProviderSession; then
// for spam, per email docs/crypto.md#extraction-pipeline on the device, spam_request, garbled
// evaluation, spam_done (topics: topic-session.ts). A spam request whose
// answer was lost with the connection is re-sent as is on the next session
// (spam_resend, docs/protocol.md#exactly-once-verdicts). No DOM and no
// Node-only API: the socket is anything with the browser WebSocket interface
// (the `ws` package's WebSocket in Node).
import { ProtocolError } from '../../protocol/errors.js';
import {
  decodeMessage,
  encodeMessage,
  MESSAGE_COUNTED,
  RATE_COUNTED,
  type Message,
  type MessageName,
  type Messages,
} from '../../protocol/messages.js';
import { CLIENT_MAX_FRAME_BYTES, TOPUP_OTS } from '../../protocol/limits.js';
import type { PackageHeader } from '../../protocol/package.js';
import { extractFeatures, validateSpec, type FeatureSpec } from '../../models/features/index.js';
import { evaluateSpam, spamChoice, type PendingEvaluation } from '../../wasm/ts/gc.js';
import {
  packageParams,
  type ClientKeySwitchKey,
  type ClientModel,
  type ClientPublicKey,
  type He,
  type HeParams,
} from '../../wasm/ts/he.js';
import { maxExtendWithin, OtReceiver } from '../../wasm/ts/ot.js';
import { PackageIntegrityError, type VerifiedPackage } from './download.js';
import { fromMessage } from './message-failure.js';
import { pacerFor, type RatePacer } from './pacer.js';
import type { FloodLedger } from './flood-ledger.js';
import type { KeptRequests } from './kept-requests.js';
import type { ReplayEntry } from './topic-replay.js';

/** The subset of the browser WebSocket API the client uses. */
export interface SocketLike {
  binaryType: string;
  readonly readyState: number;
  send(data: Uint8Array): void;
  close(code?: number, reason?: string): void;
  addEventListener(
    type: 'open' | 'close' | 'error' | 'message',
    listener: (ev: { data?: unknown; code?: number }) => void,
  ): void;
}

export type SocketFactory = (url: string) => SocketLike;

/** A verified package loaded for the dot product. */
export interface LoadedModel {
  header: PackageHeader;
  sha256: string;
  params: HeParams;
  spec: FeatureSpec;
  model: ClientModel;
  providerSeed: Uint8Array;
  /**
   * This user's key-switching key for the model version (docs/security.md):
   * fetched in a welcome, kept until the provider announces the next epoch.
   */
  userKey?: { epoch: number; ksk: ClientKeySwitchKey };
}

export function loadModel(he: He, pkg: VerifiedPackage, task: PackageHeader['task'] = 'spam'): LoadedModel {
  if (pkg.header.task !== task)
    throw new Error(`model ${pkg.header.modelId} is a ${pkg.header.task} model, not ${task}`);
  const params = packageParams(pkg.header.params);
  const model = he.newClientModel(params);
  model.push(pkg.body);
  model.finish();
  return {
    header: pkg.header,
    sha256: pkg.sha256,
    params,
    spec: validateSpec(pkg.header.featureSpec),
    model,
    providerSeed: hexToBytes(pkg.header.providerSeed),
  };
}

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

/** A ProtocolError from the provider's error frame, or a closed connection. */
export class ConnectionClosed extends Error {
  constructor(message = 'connection to the provider closed') {
    super(message);
    this.name = 'ConnectionClosed';
  }
}

export interface SessionOptions {
  url: string;
  token: string;
  model: LoadedModel;
  he: He;
  socket: SocketFactory;
  /** Expected number of emails, to size the first OT batch (pool top-ups follow on demand). */
  expectedEmails?: number;
  /** Local log for invalid garbled outputs (never sent). */
  onInvalidOutput?: (messageId: string) => void;
  /** Local note about a message's content (e.g. an empty body), from feature extraction. */
  onMessageWarning?: (messageId: string, warning: string) => void;
  /** Spam requests are kept here before they leave, until their outcome is stored (kept-requests.ts). */
  kept?: KeptRequests;
  /** A new key-switching key arrived (validated): persist it so later sessions need not fetch it again. */
  onUserKey?: (epoch: number, ksk: Uint8Array) => Promise<void>;
  /** The device's flooding budget: every ciphertext is charged here before it leaves (flood-ledger.ts). */
  flood?: FloodLedger;
  timeoutMs?: number;
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

/** What spam and topic sessions share: connection, hello, OT pool, request/response. */
export abstract class ProviderSession {
  protected nextRequest = 1;
  private readonly waiting = new Map<number, { resolve(m: Message): void; reject(e: Error): void }>();
  private closedError: Error | undefined;
  protected pk: ClientPublicKey | undefined;
  /** Owned by the LoadedModel (it outlives sessions); never disposed here. */
  protected ksk: ClientKeySwitchKey | undefined;
  protected receiver: OtReceiver | undefined;
  protected sent = 0;
  protected received = 0;
  sessionId = '';
  /** Decryptions left under this session's user key (welcome.keyBudget, counted down per request). */
  protected keyBudget = 0;
  /** Spaces the frames the provider counts (welcome.requestsPerMinute), shared with this user's other sessions. */
  private pacer: RatePacer | undefined;
  /** The largest frame the provider reads (welcome.maxFrameBytes); nothing larger is sent. */
  private maxFrameBytes = Number.MAX_SAFE_INTEGER;
  /** The welcome's SHA-256 of the topic model's candidate model (empty for spam). */
  protected candidatesSha256 = '';
  /** OTs one email takes (its garbled circuit's client input bits). */
  protected abstract readonly otsPerEmail: number;

  protected constructor(
    private readonly ws: SocketLike,
    protected readonly opts: SessionOptions,
  ) {
    ws.addEventListener('message', (ev) => this.onFrame(ev.data));
    ws.addEventListener('close', () => this.onClose(new ConnectionClosed()));
    ws.addEventListener('error', () => this.onClose(new ConnectionClosed('connection to the provider failed')));
  }

  /** Connects, authenticates, checks p0 and sets up OT for the session `make` builds on the socket. */
  protected static async connect<S extends ProviderSession>(
    opts: SessionOptions,
    make: (ws: SocketLike) => S,
  ): Promise<S> {
    const ws = opts.socket(opts.url);
    ws.binaryType = 'arraybuffer';
    await new Promise<void>((resolve, reject) => {
      ws.addEventListener('open', () => resolve());
      ws.addEventListener('error', () => reject(new ConnectionClosed(`cannot connect to ${opts.url}`)));
      ws.addEventListener('close', () => reject(new ConnectionClosed(`cannot connect to ${opts.url}`)));
    });
    const s = make(ws);
    try {
      await s.handshake();
    } catch (e) {
      s.close();
      throw e;
    }
    return s;
  }

  private async handshake(): Promise<void> {
    const { he, model } = this.opts;
    const clientNonce = he.randomSeed();
    const w = await this.request('hello', 'welcome', {
      token: this.opts.token,
      modelId: model.header.modelId,
      modelVersion: model.header.modelVersion,
      clientNonce,
      keyEpoch: model.userKey?.epoch ?? 0,
    });
    if (bytesToHex(w.packageSha256) !== model.sha256) {
      throw new PackageIntegrityError(
        'the provider serves a different package for this model version than the one downloaded (docs/threat-model.md#malicious-provider: refusing)',
      );
    }
    // Validates p0's size and ranges and recomputes p1 from the joint seed (docs/crypto.md#per-session-public-key).
    this.pk = he.loadPublicKey(w.p0, model.providerSeed, clientNonce);
    if (w.ksk.length > 0) {
      const ksk = he.loadKeySwitchKey(w.ksk); // validates size and ranges
      try {
        ksk.checkServes(model.params);
      } catch (e) {
        ksk.dispose();
        throw e;
      }
      model.userKey?.ksk.dispose();
      model.userKey = { epoch: w.keyEpoch, ksk };
      await this.opts.onUserKey?.(w.keyEpoch, w.ksk.slice());
    } else if (model.userKey?.epoch !== w.keyEpoch) {
      throw new Error(`the provider sent no key for key epoch ${w.keyEpoch}`);
    }
    this.ksk = model.userKey.ksk;
    this.sessionId = w.sessionId;
    this.candidatesSha256 = bytesToHex(w.candidatesSha256);
    this.keyBudget = w.keyBudget;
    this.maxFrameBytes = w.maxFrameBytes;
    this.pacer = pacerFor(this.opts.url, this.opts.token, w.requestsPerMinute);
    this.receiver = new OtReceiver(he.core, new TextEncoder().encode(w.sessionId)); // binds KOS to this session
    const b = await this.request('ot', 'ot_reply', { payload: this.receiver.start() });
    this.receiver.finish(b.payload);
    await this.topUp(this.opts.expectedEmails ?? 16);
  }

  /**
   * Extends the OT pool to cover `emails` more emails, at most TOPUP_OTS at
   * a time, in extensions that fit the provider's frames.
   */
  private async topUp(emails: number): Promise<void> {
    const per = this.otsPerEmail;
    const fit = maxExtendWithin(this.maxFrameBytes);
    if (fit === 0) throw new Error(`the provider reads frames of at most ${this.maxFrameBytes} bytes: too few for OTs`);
    for (let left = Math.min(Math.max(TOPUP_OTS, per), Math.max(per, emails * per)); left > 0; left -= fit)
      await this.request('ot', 'ot_reply', { payload: this.receiver!.extend(Math.min(fit, left)) });
  }

  /** Tops the OT pool up when it cannot cover the next email. */
  protected async ensureOts(remaining: number): Promise<void> {
    if (this.receiver!.available < this.otsPerEmail) await this.topUp(remaining);
    this.alive();
  }

  /** Throws the closing error if the connection is gone (its state is wiped then). */
  protected alive(): void {
    if (this.closedError) throw this.closedError;
  }

  /** Says bye and closes; wipes the OT pool and the public key. */
  close(): void {
    if (this.ws.readyState === 1) {
      this.sendFrame('bye', this.nextRequest++, {});
      this.ws.close(1000, 'bye');
    }
    this.cleanup();
  }

  private cleanup(): void {
    this.receiver?.close();
    this.receiver = undefined;
    this.pk?.dispose();
    this.pk = undefined;
    this.ksk = undefined;
  }

  protected sendFrame<K extends MessageName>(name: K, requestId: number, fields: Messages[K]): void {
    if (this.closedError) throw this.closedError;
    const frame = encodeMessage(name, requestId, fields);
    // The provider would refuse it (or drop the connection) after reading it all.
    if (frame.length > this.maxFrameBytes)
      throw new Error(
        `the provider reads frames of at most ${this.maxFrameBytes} bytes; this ${name} has ${frame.length}`,
      );
    this.sent += frame.length;
    this.ws.send(frame);
  }

  /**
   * Sends one email's request and returns the garbled circuit of the answer,
   * which must name the same message. When the answer may still come (a lost
   * connection, a transient refusal) the error is `keep(e)`, which keeps the
   * pending evaluation for a resend; otherwise it is wiped.
   */
  protected async garbledFor<K extends 'spam_request' | 'spam_resend' | 'topic_request' | 'topic_resend'>(
    name: K,
    fields: Messages[K],
    pending: PendingEvaluation | undefined,
    keep: (reason: Error) => InterruptedRequest<{ messageId: string }>,
  ): Promise<Uint8Array> {
    const expect: 'spam_gc' | 'topic_gc' = name.startsWith('topic') ? 'topic_gc' : 'spam_gc';
    try {
      const reply = await this.request(name, expect, fields);
      if (reply.messageId !== fields.messageId) {
        throw new Error(`${expect} names message ${reply.messageId}, not ${fields.messageId}`);
      }
      return reply.gc;
    } catch (e) {
      if (retryable(e)) throw keep(e as Error);
      pending?.dispose();
      throw e;
    }
  }

  /** One message's blocklist evaluation (docs/blocklist.md): blinded elements out, the provider's k·B back. */
  async evaluateBlocklist(
    messageId: string,
    list: { listId: string; version: number },
    blinded: Uint8Array,
  ): Promise<{ evaluated: Uint8Array; bytesSent: number; bytesReceived: number }> {
    const sent0 = this.sent;
    const recv0 = this.received;
    const r = await this.request('blocklist_request', 'blocklist_reply', {
      messageId,
      listId: list.listId,
      listVersion: list.version,
      blinded,
    });
    if (r.messageId !== messageId) throw new Error(`blocklist_reply names message ${r.messageId}, not ${messageId}`);
    return { evaluated: r.evaluated, bytesSent: this.sent - sent0, bytesReceived: this.received - recv0 };
  }

  protected async request<K extends MessageName, R extends MessageName>(
    name: K,
    expect: R,
    fields: Messages[K],
  ): Promise<Extract<Message, { name: R }>> {
    if (this.pacer && RATE_COUNTED.has(name)) {
      await this.pacer.take(MESSAGE_COUNTED.has(name) ? (fields as { messageId: string }).messageId : undefined);
    }
    const id = this.nextRequest++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new ConnectionClosed(`no answer to ${name} within ${this.opts.timeoutMs ?? 60_000} ms`));
      }, this.opts.timeoutMs ?? 60_000);
      this.waiting.set(id, {
        resolve: (m) => {
          clearTimeout(timer);
          if (m.name === 'error') reject(new ProtocolError(m.code as never, m.message));
          else if (m.name !== expect) reject(new Error(`expected ${expect} from the provider, got ${m.name}`));
          else resolve(m as Extract<Message, { name: R }>);
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      });
      try {
        this.sendFrame(name, id, fields);
      } catch (e) {
        this.waiting.get(id)?.reject(e as Error);
        this.waiting.delete(id);
      }
    });
  }

  private onFrame(data: unknown): void {
    const bytes =
      data instanceof ArrayBuffer
        ? new Uint8Array(data)
        : ArrayBuffer.isView(data)
          ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength)
          : undefined;
    if (!bytes) return;
    this.received += bytes.length;
    let m: Message;
    try {
      m = decodeMessage(bytes, CLIENT_MAX_FRAME_BYTES);
    } catch {
      return this.onClose(new ConnectionClosed('the provider sent a malformed frame'));
    }
    const w = this.waiting.get(m.requestId);
    if (!w) return; // e.g. an error frame for a request we did not await (spam_done)
    this.waiting.delete(m.requestId);
    w.resolve(m);
  }

  private onClose(e: Error): void {
    if (this.closedError) return;
    this.closedError = e;
    for (const w of this.waiting.values()) w.reject(e);
    this.waiting.clear();
    this.cleanup();
  }
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

export function bytesToHex(b: Uint8Array): string {
  return Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
}

function hexToBytes(h: string): Uint8Array {
  return Uint8Array.from(h.match(/../g) ?? [], (x) => parseInt(x, 16));
}
