// One client's WebSocket session (PROTOCOL.md §4), independent of the socket:
// frames in through `receive`, frames out through `send`. States:
//
//   awaiting_hello --hello(ok)--> ready --bye--> closed
//
// In `ready`: `ot` (base OTs and pool top-ups), `spam_request` → `spam_gc`,
// `spam_done`. `ping`/`pong` and `bye` are allowed in any state. Frames of one
// session are handled strictly one after another; every bad frame gets an
// error frame naming the problem and never affects other sessions.
import { randomBytes } from 'node:crypto';
import { isErrorCode, ProtocolError, type ErrorCode } from '../../protocol/errors.js';
import { peekRequestId } from '../../protocol/frame.js';
import {
  decodeMessage,
  encodeMessage,
  type Message,
  type MessageName,
  type Messages,
} from '../../protocol/messages.js';
import type { ProviderCrypto, ServedModel } from './crypto.js';
import { MAX_SESSION_ERRORS, type ServerLimits } from './limits.js';
import type { Metrics } from './metrics.js';
import type { Store } from './store.js';

export interface SessionDeps {
  store: Store;
  crypto: ProviderCrypto;
  metrics: Metrics;
  /** The current version of a model id, if served. */
  currentModel(id: string): ServedModel | undefined;
  limits: Pick<
    ServerLimits,
    'maxFrameBytes' | 'requestsPerMinute' | 'hellosPerMinute' | 'pingsPerMinute' | 'userKeyBudget'
  >;
  log(line: string): void;
  /** Called once, when hello succeeds. */
  onReady?(): void;
}

/** Errors after which the session is closed (nothing more can usefully happen). */
const FATAL: ReadonlySet<ErrorCode> = new Set(['crypto_rejected', 'key_rotated']);
/**
 * Answers a client gets while resynchronising its mailbox after a reconnect:
 * normal, so they do not count as bad frames (each request still costs rate).
 */
const RESYNC: ReadonlySet<ErrorCode> = new Set(['already_classified', 'unknown_message']);

export class Session {
  readonly id = randomBytes(12).toString('base64url');
  private state: 'awaiting_hello' | 'ready' | 'closed' = 'awaiting_hello';
  private userId = 0;
  private model: ServedModel | undefined;
  /** The user-key epoch this session's ciphertexts are switched to. */
  private keyEpoch = 0;
  /** Message whose spam_gc was sent and whose spam_done is expected. */
  private awaitingDone: string | undefined;
  private errors = 0;
  private pings = { window: 0, count: 0 };
  private queue: Promise<void> = Promise.resolve();

  constructor(
    private readonly deps: SessionDeps,
    private readonly send: (frame: Uint8Array) => void,
    private readonly close: (code: number, reason: string) => void,
  ) {}

  get closed(): boolean {
    return this.state === 'closed';
  }

  /** Queues one received frame (text messages are refused); resolves when it has been handled. */
  receive(data: Uint8Array | string): Promise<void> {
    this.queue = this.queue.then(() => this.handle(data));
    return this.queue;
  }

  /** Socket closed: drop crypto state. */
  async end(): Promise<void> {
    if (this.state === 'closed' && !this.model) return;
    this.state = 'closed';
    if (this.model) {
      this.model = undefined;
      await this.deps.crypto.endSession(this.id).catch(() => undefined);
    }
  }

  private reply<K extends MessageName>(name: K, requestId: number, fields: Messages[K]): void {
    if (this.state !== 'closed' || name === 'error') this.send(encodeMessage(name, requestId, fields));
  }

  private async handle(data: Uint8Array | string): Promise<void> {
    if (this.state === 'closed') return;
    let msg: Message | undefined;
    try {
      if (typeof data === 'string') {
        throw new ProtocolError(
          'malformed_frame',
          'text WebSocket messages are not part of the protocol; send binary frames',
        );
      }
      msg = decodeMessage(data, this.deps.limits.maxFrameBytes);
      this.deps.metrics.requests.inc({ type: msg.name });
      await this.dispatch(msg);
    } catch (e) {
      // A failed hello (bad token, unknown or outdated model) ends the session.
      const fatal = msg?.name === 'hello' && this.state === 'awaiting_hello';
      this.fail(e, msg?.requestId ?? (typeof data === 'string' ? 0 : peekRequestId(data)), fatal);
    }
  }

  private fail(e: unknown, requestId: number, fatal: boolean): void {
    let code: ErrorCode = 'internal';
    let message = 'internal error';
    if (e instanceof ProtocolError) {
      code = e.code;
      message = e.message;
    } else {
      const c = (e as { code?: unknown })?.code;
      if (typeof c === 'string' && isErrorCode(c) && c !== 'internal') {
        code = c;
        message = (e as Error).message;
      } else {
        // Details go to the server log only (messages are secret-free by construction).
        this.deps.log(`session ${this.id}: internal error: ${(e as Error)?.message ?? e}`);
      }
    }
    this.deps.metrics.errors.inc({ kind: code });
    this.send(encodeMessage('error', requestId, { code, message: message.slice(0, 1000) }));
    if (!RESYNC.has(code)) this.errors++;
    if (fatal || FATAL.has(code) || this.errors >= MAX_SESSION_ERRORS) {
      void this.end();
      this.close(1008, code);
    }
  }

  private async dispatch(msg: Message): Promise<void> {
    switch (msg.name) {
      case 'ping':
        this.takePing();
        return this.reply('pong', msg.requestId, { nonce: msg.nonce });
      case 'bye':
        await this.end();
        return this.close(1000, 'bye');
      case 'hello':
        return this.hello(msg);
      case 'ot':
        return this.ot(msg);
      case 'spam_request':
        return this.spamRequest(msg);
      case 'spam_done':
        return this.spamDone(msg);
      default:
        throw new ProtocolError('out_of_order', `${msg.name} is sent by the provider, never to it`);
    }
  }

  private requireReady(name: string): ServedModel {
    if (this.state !== 'ready' || !this.model) {
      throw new ProtocolError(
        this.state === 'awaiting_hello' ? 'unauthenticated' : 'out_of_order',
        `${name} before a successful hello`,
      );
    }
    return this.model;
  }

  private async hello(msg: Extract<Message, { name: 'hello' }>): Promise<void> {
    if (this.state !== 'awaiting_hello')
      throw new ProtocolError('out_of_order', 'hello was already received in this session');
    const userId = this.deps.store.authenticate(msg.token);
    if (userId === undefined) throw new ProtocolError('unauthenticated', 'the bearer token is not valid');
    // Each hello costs a public key (and maybe a KSK): bounded per user.
    if (!this.deps.store.takeRate(userId, this.deps.limits.hellosPerMinute, Date.now(), 'hello')) {
      throw new ProtocolError('rate_limited', `at most ${this.deps.limits.hellosPerMinute} sessions per minute`);
    }
    const model = this.deps.currentModel(msg.modelId);
    if (!model) throw new ProtocolError('unknown_model', `model ${msg.modelId} is not served here`);
    if (msg.modelVersion < model.version) {
      throw new ProtocolError(
        'model_outdated',
        `model ${model.id} version ${msg.modelVersion} is outdated; download version ${model.version}`,
      );
    }
    if (msg.modelVersion > model.version) {
      throw new ProtocolError(
        'unknown_model',
        `model ${model.id} version ${msg.modelVersion} does not exist (current: ${model.version})`,
      );
    }
    const p0 = await this.timed('public_key', () => this.deps.crypto.publicKey(model, msg.clientNonce));
    const key = this.deps.store.userKey(userId, model.id, model.version);
    const ksk =
      msg.keyEpoch === key.epoch
        ? new Uint8Array(0)
        : await this.timed('ksk', () => this.deps.crypto.keySwitchKey(model, { userId, epoch: key.epoch }));
    this.userId = userId;
    this.model = model;
    this.keyEpoch = key.epoch;
    this.state = 'ready';
    this.deps.onReady?.();
    this.reply('welcome', msg.requestId, {
      sessionId: this.id,
      modelVersion: model.version,
      packageSha256: Buffer.from(model.packageSha256, 'hex'),
      p0,
      keyEpoch: key.epoch,
      ksk,
      keyBudget: this.deps.limits.userKeyBudget - key.used,
      maxFrameBytes: this.deps.limits.maxFrameBytes,
      requestsPerMinute: this.deps.limits.requestsPerMinute,
    });
  }

  private async ot(msg: Extract<Message, { name: 'ot' }>): Promise<void> {
    const model = this.requireReady('ot');
    // OT batches cost the provider CPU too: they count against the same per-user budget.
    this.takeRate();
    const payload = await this.timed('ot', () => this.deps.crypto.ot(this.id, model, msg.payload));
    this.reply('ot_reply', msg.requestId, { payload });
  }

  private async spamRequest(msg: Extract<Message, { name: 'spam_request' }>): Promise<void> {
    const model = this.requireReady('spam_request');
    if (this.awaitingDone !== undefined) {
      throw new ProtocolError('out_of_order', `spam_request before spam_done for the previous message`);
    }
    this.takeRate();
    const claim = this.deps.store.claim(this.userId, msg.messageId, 'spam');
    if (claim === 'unknown_message')
      throw new ProtocolError('unknown_message', `message ${msg.messageId} was not delivered to this user`);
    if (claim === 'already_classified')
      throw new ProtocolError('already_classified', `message ${msg.messageId} was already classified`);
    // Every decryption counts against the user key's budget (docs/security.md);
    // once another session rotated it, this session's ciphertexts are refused.
    const user = { userId: this.userId, epoch: this.keyEpoch };
    if (
      this.deps.store.spendUserKey(user.userId, model.id, model.version, user.epoch, this.deps.limits.userKeyBudget) ===
      'rotated'
    ) {
      this.deps.store.releaseClaim(this.userId, msg.messageId, 'spam');
      throw new ProtocolError('key_rotated', 'this key epoch is used up: reconnect to get the next key');
    }
    let gc: Uint8Array;
    try {
      gc = await this.timed('spam', () => this.deps.crypto.spam(this.id, model, user, msg.lwe, msg.choices));
    } catch (e) {
      // Nothing left the provider: the client may ask again for this message.
      this.deps.store.releaseClaim(this.userId, msg.messageId, 'spam');
      throw e;
    }
    if (this.state !== 'ready') {
      this.deps.store.releaseClaim(this.userId, msg.messageId, 'spam');
      return;
    }
    this.awaitingDone = msg.messageId;
    this.reply('spam_gc', msg.requestId, { messageId: msg.messageId, gc });
  }

  private spamDone(msg: Extract<Message, { name: 'spam_done' }>): void {
    this.requireReady('spam_done');
    if (this.awaitingDone !== msg.messageId) {
      throw new ProtocolError('out_of_order', `spam_done for ${msg.messageId}, which has no outstanding spam_gc`);
    }
    this.awaitingDone = undefined;
  }

  private takeRate(): void {
    if (!this.deps.store.takeRate(this.userId, this.deps.limits.requestsPerMinute)) {
      throw new ProtocolError(
        'rate_limited',
        `at most ${this.deps.limits.requestsPerMinute} requests (spam and OT) per minute`,
      );
    }
  }

  /** Pings keep a session open and cost a reply: a per-minute budget, in memory. */
  private takePing(): void {
    const window = Math.floor(Date.now() / 60_000);
    if (window !== this.pings.window) this.pings = { window, count: 0 };
    if (++this.pings.count > this.deps.limits.pingsPerMinute) {
      throw new ProtocolError('rate_limited', `at most ${this.deps.limits.pingsPerMinute} pings per minute`);
    }
  }

  private async timed<T>(op: string, fn: () => Promise<T>): Promise<T> {
    const end = this.deps.metrics.cryptoSeconds.startTimer({ op });
    try {
      return await fn();
    } finally {
      end();
    }
  }
}
