// One client's WebSocket session (docs/protocol.md#session-states), independent of the socket:
// frames in through `receive`, frames out through `send`. States:
//
//   awaiting_hello --hello(ok)--> ready --bye--> closed
//
// In `ready`: `ot` (base OTs and pool top-ups), `topic_setting`; on a spam
// model `spam_request` → `spam_gc`, `spam_done` (`spam_resend` → the recorded
// `spam_gc` after a reconnect, docs/protocol.md#exactly-once-verdicts); on a topic model
// `topic_request` → `topic_gc`, `topic_labels` → `topic_ack` (`topic_resend` →
// the recorded `topic_gc`; one email at a time). `ping`/`pong` and `bye` are
// allowed in any state. Frames of one session are handled strictly one after
// another (a spam_done's write goes on beside the next, acknowledgements.ts);
// every bad frame gets an error frame naming the problem and never affects
// other sessions.
import { randomBytes } from 'node:crypto';
import { ProtocolError, type ErrorCode } from '../../protocol/errors.js';
import { peekRequestId } from '../../protocol/frame.js';
import {
  decodeMessage,
  encodeMessage,
  type Message,
  type MessageName,
  type Messages,
} from '../../protocol/messages.js';
import { EXCHANGES, UnitFrames, type Exchange } from '../../protocol/exchanges.js';
import { topicCiphertexts, type UserKeyId } from '../../wasm/ts/he.js';
import { Acknowledgements } from './acknowledgements.js';
import { lookUp } from './session-blocklist.js';
import { greet } from './session-hello.js';
import type { SessionDeps } from './session-deps.js';
import { errorOf, FATAL, RESYNC } from './session-errors.js';
import { claimOnce, packTopicAnswer, requestDigest, unpackTopicAnswer } from './claim-once.js';
import type { ServedModel } from './crypto.js';
import { MAX_SESSION_ERRORS } from './limits.js';
import { takeMessageRate, takeUnit, type RatedUser } from './message-rate.js';
import type { Task } from './store.js';

/**
 * Requests whose rate charge is taken with their claim, in one write
 * (decryptOnce, message-rate.ts chargeAndClaim); refused before it, they
 * pay alone (chargedIfRefused), so every frame still pays as before.
 */
const CHARGED_WITH_CLAIM: ReadonlySet<MessageName> = new Set(['spam_request', 'topic_request']);

export class Session {
  readonly id = randomBytes(12).toString('base64url');
  private state: 'awaiting_hello' | 'ready' | 'closed' = 'awaiting_hello';
  private userId = 0;
  private model: ServedModel | undefined;
  /** The user key (account salt, epoch) this session's ciphertexts are switched to. */
  private userKey: UserKeyId | undefined;
  /** Message (and its request digest) whose spam_gc was sent and whose spam_done is expected. */
  private awaitingDone: { messageId: string; request: Buffer } | undefined;
  /** Message whose topic_gc was sent and whose topic_labels are expected. */
  private awaitingLabels: { messageId: string; request: Buffer; decoder: Uint8Array } | undefined;
  private errors = 0;
  private readonly units = new UnitFrames();
  private pings = { window: 0, count: 0 };
  private queue: Promise<void> = Promise.resolve();
  /**
   * Whether this session capped its user's unacknowledged answers yet: once,
   * with its first recorded answer. After that it holds at most one of its
   * own (one email at a time, requireIdle), so only a session that ended
   * before its client acknowledged leaves one behind, and the next session's
   * first answer caps it (docs/protocol.md#exactly-once-verdicts).
   */
  private answersCapped = false;
  /** spam_done's writes, off the next email's path. */
  private readonly acks = new Acknowledgements((e) => this.logFailure(e, 'internal'));

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
    this.awaitingLabels?.decoder.fill(0);
    this.awaitingLabels = undefined;
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
    const { code, message } = errorOf(e);
    this.logFailure(e, code);
    this.send(encodeMessage('error', requestId, { code, message: message.slice(0, 1000) }));
    if (!RESYNC.has(code)) this.errors++;
    if (fatal || FATAL.has(code) || this.errors >= MAX_SESSION_ERRORS) {
      void this.end();
      this.close(1008, code);
    }
  }

  /** Logs and counts a failure; details of our own go to the log only (messages are secret-free by construction). */
  private logFailure(e: unknown, code: ErrorCode): void {
    const detail = code === 'internal' ? `: ${(e as Error)?.message ?? e}` : '';
    this.deps.log.failed(`session_${code}`, `session error ${code}${detail}`, {
      session: this.id,
      ...(this.userId && { user: this.userId }),
      level: code === 'internal' ? 'error' : RESYNC.has(code) ? 'info' : 'warn',
    });
    this.deps.metrics.errors.inc({ kind: code });
  }

  private async dispatch(msg: Message): Promise<void> {
    // The protocol's table (protocol/exchanges.ts): who sends it, in which state, what it costs.
    const exchange: Exchange = EXCHANGES[msg.name];
    if (exchange.from !== 'client')
      throw new ProtocolError('out_of_order', `${msg.name} is sent by the provider, never to it`);
    if (exchange.state === 'ready') this.requireReady(msg.name);
    if (exchange.counted === 'message' && 'messageId' in msg && !CHARGED_WITH_CLAIM.has(msg.name))
      await this.takeMessageRate(msg.messageId);
    else if (this.units.counts(msg.name)) await takeUnit(this.deps.store, this.deps.limits, this.userId);
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
      case 'spam_resend':
        return this.spamResend(msg);
      case 'spam_done':
        return this.spamDone(msg);
      case 'topic_request':
        return this.topicRequest(msg);
      case 'topic_resend':
        return this.topicResend(msg);
      case 'topic_labels':
        return this.topicLabels(msg);
      case 'topic_setting':
        return this.topicSetting(msg);
      case 'blocklist_request':
        return this.blocklistRequest(msg);
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
    const { userId, model, userKey, welcome } = await greet(this.deps, msg, (op, fn) => this.timed(op, fn));
    this.userId = userId;
    this.model = model;
    this.userKey = userKey;
    this.state = 'ready';
    this.deps.onReady?.();
    this.reply('welcome', msg.requestId, { sessionId: this.id, ...welcome });
  }

  private async ot(msg: Extract<Message, { name: 'ot' }>): Promise<void> {
    const model = this.requireReady('ot');
    const payload = await this.timed('ot', () => this.deps.crypto.ot(this.id, model, msg.payload));
    this.reply('ot_reply', msg.requestId, { payload });
  }

  private async spamRequest(msg: Extract<Message, { name: 'spam_request' }>): Promise<void> {
    const model = this.requireReady('spam_request');
    await this.chargedIfRefused(msg.messageId, () => {
      if (model.topics) throw new ProtocolError('out_of_order', `spam_request in a session of topic model ${model.id}`);
      this.requireIdle('spam_request');
    });
    const request = requestDigest('spam', msg.messageId, msg.lwe, msg.choices);
    const gc = await this.decryptOnce('spam', msg.messageId, request, 1, true, (user) =>
      this.timed('spam', () => this.deps.crypto.spam(this.id, model, user, msg.lwe, msg.choices)),
    );
    if (gc === undefined) return;
    this.awaitingDone = { messageId: msg.messageId, request };
    this.reply('spam_gc', msg.requestId, { messageId: msg.messageId, gc });
  }

  /**
   * A spam_request sent again after a reconnect: answered with the recorded
   * spam_gc, byte for byte, and never computed again (docs/security.md#exactly-once-verdicts:
   * the bytes are useless without the OT state of the session that asked first).
   */
  private async spamResend(msg: Extract<Message, { name: 'spam_resend' }>): Promise<void> {
    const model = this.requireReady('spam_resend');
    if (model.topics) throw new ProtocolError('out_of_order', `spam_resend in a session of topic model ${model.id}`);
    this.requireIdle('spam_resend');
    const request = requestDigest('spam', msg.messageId, msg.lwe, msg.choices);
    await this.acks.settled(); // an answer this session acknowledged is not sent again
    const answer = await this.recorded('spam', msg.messageId, request, 'spam_request');
    if (this.state !== 'ready') return;
    this.awaitingDone = { messageId: msg.messageId, request };
    this.reply('spam_gc', msg.requestId, { messageId: msg.messageId, gc: answer });
  }

  /** The answer recorded for exactly this request, or the error that tells the client what to do instead. */
  private async recorded(task: Task, messageId: string, request: Buffer, again: string): Promise<Uint8Array> {
    const found = await this.deps.store.recordedAnswer(this.userId, messageId, task, request);
    if (found === 'unknown_message')
      throw new ProtocolError('unknown_message', `message ${messageId} was not delivered to this user`);
    if (found === 'already_classified')
      throw new ProtocolError(
        'already_classified',
        `message ${messageId} was classified for another request, or its answer was acknowledged`,
      );
    if (found === 'not_answered')
      throw new ProtocolError(
        'not_answered',
        `no answer to this request for message ${messageId} left the provider: send a new ${again}`,
      );
    return found.answer;
  }

  /**
   * Runs the checks of a request charged with its claim (CHARGED_WITH_CLAIM);
   * when one refuses it, the frame is charged alone before the refusal is
   * answered (a refused charge is answered instead, as when it came first).
   */
  private async chargedIfRefused<T>(messageId: string, checks: () => T | Promise<T>): Promise<T> {
    try {
      return await checks();
    } catch (e) {
      await this.takeMessageRate(messageId);
      throw e;
    }
  }

  private takeMessageRate(messageId: string): Promise<void> {
    return takeMessageRate(this.deps.store, this.deps.limits, this.ratedUser(), messageId);
  }

  /** One email at a time: its answer (spam_done or topic_labels) must come before the next request. */
  private requireIdle(name: string): void {
    const open = this.awaitingDone?.messageId ?? this.awaitingLabels?.messageId;
    if (open !== undefined) {
      const answer = this.awaitingDone !== undefined ? 'spam_done' : 'topic_labels';
      throw new ProtocolError('out_of_order', `${name} before ${answer} for message ${open}`);
    }
  }

  /**
   * Charges the request frame and claims `messageId` for `task` in one
   * write (message-rate.ts chargeAndClaim), bound to the `request` digest (at most
   * once per user, docs/protocol.md#exactly-once-verdicts), spends
   * `decryptions` of the user key's budget, runs the decrypting `work` and
   * records its answer durably before it may be sent (`keep`: with the bytes,
   * for a spam_resend). The claim is released when nothing left the provider
   * (work failed, or the session closed meanwhile: then undefined is
   * returned); a request that took the claim over meanwhile wins, and this
   * answer is never sent.
   */
  private async decryptOnce(
    task: Task,
    messageId: string,
    request: Buffer,
    decryptions: number,
    keep: boolean,
    work: (user: UserKeyId) => Promise<Uint8Array>,
  ): Promise<Uint8Array | undefined> {
    const model = this.model!;
    // Every decryption counts against the user key's budget (docs/security.md);
    // once another session rotated it, this session's ciphertexts are refused.
    const user = this.userKey!;
    const budget = this.deps.limits.userKeyBudget;
    const store = this.deps.store;
    const once = await claimOnce(
      store,
      { userId: this.userId, messageId, task, request },
      {
        spend: {
          salt: user.salt,
          modelId: model.id,
          version: model.version,
          epoch: user.epoch,
          budget,
          count: decryptions,
        },
        rate: { limits: this.deps.limits, user: this.ratedUser() },
        work: () => work(user),
        recorded: (out) => (keep ? out : null),
        open: () => this.state === 'ready',
        keepAnswers: this.answersCapped ? undefined : this.deps.limits.unacknowledgedAnswersPerUser,
      },
    );
    if (keep && typeof once === 'object') this.answersCapped = true;
    if (once === 'already_classified')
      throw new ProtocolError('already_classified', `message ${messageId} was already classified (${task})`);
    return once === 'closed' ? undefined : once.answer;
  }

  private async spamDone(msg: Extract<Message, { name: 'spam_done' }>): Promise<void> {
    this.requireReady('spam_done');
    const done = this.awaitingDone;
    if (done?.messageId !== msg.messageId) {
      throw new ProtocolError('out_of_order', `spam_done for ${msg.messageId}, which has no outstanding spam_gc`);
    }
    this.awaitingDone = undefined;
    // The client has its answer: the recorded copy is no longer needed, and
    // its next request need not wait for that write (acknowledgements.ts).
    await this.acks.start(() => this.deps.store.acknowledge(this.userId, done.messageId, 'spam', done.request));
  }

  private async topicRequest(msg: Extract<Message, { name: 'topic_request' }>): Promise<void> {
    const model = this.requireReady('topic_request');
    const topics = await this.chargedIfRefused(msg.messageId, async () => {
      const topics = model.topics;
      if (!topics) throw new ProtocolError('out_of_order', `topic_request in a session of spam model ${model.id}`);
      this.requireIdle('topic_request');
      if (await this.deps.store.topicOptOut(this.userId))
        throw new ProtocolError(
          'opted_out',
          'this user opted out of topic extraction (send topic_setting 0 to opt in)',
        );
      const expected = topicCiphertexts(model.params, topics.bPrime);
      if (msg.lwes.length !== expected.bytes) {
        throw new ProtocolError(
          'bad_field',
          `topic_request.lwes is ${msg.lwes.length} bytes; expected ${expected.bytes} (${expected.packed ? 'one packed ciphertext' : `${topics.bPrime} LWE ciphertexts`})`,
        );
      }
      return topics;
    });
    // Recorded with its decoder before it is sent, so that a topic_resend can
    // answer it again and its labels can be decoded in a later session.
    const request = requestDigest('topics', msg.messageId, msg.lwes, msg.choices);
    const answer = await this.decryptOnce('topics', msg.messageId, request, topics.bPrime, true, async (user) => {
      const { gc, decoder } = await this.timed('topics', () =>
        this.deps.crypto.topics(this.id, model, user, topics.bPrime, msg.lwes, msg.choices),
      );
      return packTopicAnswer(gc, decoder);
    });
    if (answer === undefined) return;
    this.awaitTopicLabels(msg.messageId, msg.requestId, request, answer);
  }

  /**
   * A topic_request sent again after a reconnect: answered with the recorded
   * topic_gc, byte for byte, never garbled again; its labels are decoded with
   * the recorded decoder (docs/protocol.md#exactly-once-verdicts).
   */
  private async topicResend(msg: Extract<Message, { name: 'topic_resend' }>): Promise<void> {
    const model = this.requireReady('topic_resend');
    if (!model.topics) throw new ProtocolError('out_of_order', `topic_resend in a session of spam model ${model.id}`);
    this.requireIdle('topic_resend');
    const request = requestDigest('topics', msg.messageId, msg.lwes, msg.choices);
    const answer = await this.recorded('topics', msg.messageId, request, 'topic_request');
    if (this.state !== 'ready') return;
    this.awaitTopicLabels(msg.messageId, msg.requestId, request, answer);
  }

  private awaitTopicLabels(messageId: string, requestId: number, request: Buffer, answer: Uint8Array): void {
    const { gc, decoder } = unpackTopicAnswer(answer);
    this.awaitingLabels = { messageId, request, decoder };
    this.reply('topic_gc', requestId, { messageId, gc });
  }

  /**
   * The client's output labels. Whatever happens, the evaluation is used up
   * and the message stays claimed (a retry could otherwise probe); only a
   * valid topic is recorded.
   */
  private async topicLabels(msg: Extract<Message, { name: 'topic_labels' }>): Promise<void> {
    const model = this.requireReady('topic_labels');
    const awaited = this.awaitingLabels;
    if (awaited === undefined || awaited.messageId !== msg.messageId) {
      throw new ProtocolError(
        'out_of_order',
        `topic_labels for message ${msg.messageId}, which has no outstanding topic_gc`,
      );
    }
    this.awaitingLabels = undefined;
    const acknowledge = () => this.deps.store.acknowledge(this.userId, msg.messageId, 'topics', awaited.request);
    let topic: number;
    try {
      topic = await this.timed('topic_labels', () =>
        this.deps.crypto.topicLabels(this.id, awaited.decoder, msg.labels),
      );
    } catch (e) {
      // Used up: a resend and other labels would be a probe. Not when the
      // worker died under it (nothing was decoded): the client resends these labels.
      if (!(e instanceof ProtocolError && e.code === 'session_lost')) await acknowledge();
      throw e;
    } finally {
      awaited.decoder.fill(0);
    }
    // The index is the client's candidate S'[j], which the circuit does not
    // check: one beyond B (a lying client) is stored as -1, no topic. It is
    // answered and written exactly like a valid one: a different answer (or
    // time) would tell a client with crafted ciphertexts where the argmax
    // landed, one bit about the user key. Recorded (once) before the recorded
    // answer is dropped, so a crash in between leaves it to be decoded again.
    const valid = topic < model.params.B;
    if (await this.deps.store.recordTopic(this.userId, msg.messageId, model.id, model.version, valid ? topic : -1))
      this.deps.metrics.topics.inc({ model: model.id, topic: valid ? String(topic) : 'out_of_range' });
    await acknowledge();
    this.reply('topic_ack', msg.requestId, { messageId: msg.messageId });
  }

  /** The user's topic opt-out (docs/protocol.md#topic-extraction): recorded per user, honest and visible. */
  private async topicSetting(msg: Extract<Message, { name: 'topic_setting' }>): Promise<void> {
    this.requireReady('topic_setting');
    if (msg.optOut > 1) throw new ProtocolError('bad_field', 'topic_setting.optOut must be 0 or 1');
    await this.deps.store.setTopicOptOut(this.userId, msg.optOut === 1);
    this.reply('topic_setting_ack', msg.requestId, { optOut: msg.optOut });
  }

  /** A link check (session-blocklist.ts): once per delivered message id, within the user's daily cap. */
  private async blocklistRequest(msg: Extract<Message, { name: 'blocklist_request' }>): Promise<void> {
    this.requireReady('blocklist_request');
    const evaluated = await lookUp(this.deps, this.userId, this.ratedUser(), msg, {
      open: () => this.state === 'ready',
      timed: (op, fn) => this.timed(op, fn),
    });
    if (evaluated) this.reply('blocklist_reply', msg.requestId, { messageId: msg.messageId, evaluated });
  }

  private ratedUser(): RatedUser {
    return { userId: this.userId, salt: this.userKey!.salt };
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
