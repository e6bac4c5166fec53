// What spam and topic sessions share (docs/protocol.md#session-states): the
// connection, hello → welcome (p0 checked against the joint seed), OT base +
// extension (pool sized to the pending work, topped up on demand), and
// request/response. No DOM and no Node-only API: the socket is anything with
// the browser WebSocket interface (the `ws` package's WebSocket in Node).
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { ProtocolError } from '../../protocol/errors.js';
import {
  decodeMessage,
  encodeMessage,
  type Message,
  type MessageName,
  type Messages,
} from '../../protocol/messages.js';
import { answerTo, MESSAGE_COUNTED, UnitFrames, type AnswerTo, type Asked } from '../../protocol/exchanges.js';
import { CLIENT_MAX_FRAME_BYTES, TOPUP_OTS } from '../../protocol/limits.js';
import { packageARounds, type PackageHeader } from '../../protocol/package.js';
import { validateSpec, type FeatureSpec } from '../../models/features/index.js';
import type { PendingEvaluation } from '../../wasm/ts/gc.js';
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
import { pacerFor, type RatePacer } from './pacer.js';
import type { FloodLedger } from './flood-ledger.js';
import type { KeptRequests } from './kept-requests.js';
import { ConnectionClosed, InterruptedRequest, retryable } from './interrupted-request.js';

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
  const model = he.newClientModel(params, { aRounds: packageARounds(pkg.header) });
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

/** The requests a garbled circuit answers (spam_gc, topic_gc). */
type GarbledRequest = 'spam_request' | 'spam_resend' | 'topic_request' | 'topic_resend';

/** What spam and topic sessions share: connection, hello, OT pool, request/response. */
export abstract class ProviderSession {
  protected nextRequest = 1;
  /** Which of this session's frames the provider counts as units (the pacer takes one for each). */
  private readonly units = new UnitFrames();
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
    const w = await this.request('hello', {
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
    const b = await this.request('ot', { payload: this.receiver.start() });
    this.receiver.finish(b.payload);
    await this.topUp(Math.min(this.opts.expectedEmails ?? 16, this.emailsUnderKey()));
  }

  /**
   * Emails this session's user key can still serve (the provider then
   * rotates it, and the next email goes over a new session): OTs past them
   * would never be used. Unbounded here; a topic email takes B′ decryptions.
   */
  protected emailsUnderKey(): number {
    return Number.POSITIVE_INFINITY;
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
      await this.request('ot', { payload: this.receiver!.extend(Math.min(fit, left)) });
  }

  /** Tops the OT pool up when it cannot cover the next email. */
  protected async ensureOts(remaining: number): Promise<void> {
    if (this.receiver!.available < this.otsPerEmail) await this.topUp(Math.min(remaining, this.emailsUnderKey()));
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
  protected async garbledFor<K extends GarbledRequest>(
    name: K,
    fields: Messages[K],
    pending: PendingEvaluation | undefined,
    keep: (reason: Error) => InterruptedRequest<{ messageId: string }>,
  ): Promise<Uint8Array> {
    try {
      const reply = await this.request<GarbledRequest>(name, fields);
      if (reply.messageId !== fields.messageId) {
        throw new Error(`${reply.name} names message ${reply.messageId}, not ${fields.messageId}`);
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
    const r = await this.request('blocklist_request', {
      messageId,
      listId: list.listId,
      listVersion: list.version,
      blinded,
    });
    if (r.messageId !== messageId) throw new Error(`blocklist_reply names message ${r.messageId}, not ${messageId}`);
    return { evaluated: r.evaluated, bytesSent: this.sent - sent0, bytesReceived: this.received - recv0 };
  }

  /** Sends a request and resolves with its answer (protocol/exchanges.ts); an error frame rejects. */
  protected async request<K extends Asked>(
    name: K,
    fields: Messages[K],
  ): Promise<Extract<Message, { name: AnswerTo<K> }>> {
    const expect = answerTo(name);
    if (MESSAGE_COUNTED.has(name)) await this.pacer?.take((fields as { messageId: string }).messageId);
    else if (this.units.counts(name)) await this.pacer?.take();
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
          else resolve(m as Extract<Message, { name: AnswerTo<K> }>);
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
