// The client side of private topic extraction (docs/crypto.md#extraction-pipeline, docs/crypto.md#garbled-circuits, docs/protocol.md#topic-extraction,
// Pretzel §4.3). Per email, on the device: features; the B' best topics of
// the public candidate model (the candidate set S', never sent); the encrypted
// dot product; the B' values, each blinded and flooded, in B' LWE ciphertexts
// with fresh encryptions of zero so the provider cannot link them to S' (or
// one packed ciphertext when S' is every topic); gc_choice for the argmax. Then
// topic_request → topic_gc, garbled evaluation, the output labels back in
// topic_labels → topic_ack. The provider learns the topic; the client learns
// nothing about the private model (docs/threat-model.md#non-negotiable-properties), so its result names only the public
// model's local best guess. Every email passes the replay log first (docs/protocol.md#at-most-once-classification).
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import { extractFeatures } from '../../models/features/index.js';
import { fromMessage } from './message-failure.js';
import { ProtocolError } from '../../protocol/errors.js';
import { argmax, candidates, loadPlainModel, plainScores, type PlainModel } from '../../models/plain/index.js';
import { argmaxChoice, evaluateArgmax, type PendingEvaluation } from '../../wasm/ts/gc.js';
import type { He } from '../../wasm/ts/he.js';
import { createConnector, type Connector, type ConnectorOptions } from './connect.js';
import type { PackageStorage, VerifiedPackage } from './download.js';
import type { KeptTopicRequest, KeptTopicRequests } from './kept-requests.js';
import type { Messages } from '../../protocol/messages.js';
import { InterruptedRequest, retryable } from './interrupted-request.js';
import {
  loadModel,
  ProviderSession,
  type LoadedModel,
  type SessionOptions,
  type SocketLike,
} from './provider-session.js';
import { contentHash, type ReplayEntry, type ReplayLog } from './topic-replay.js';

/** A topic package loaded for the dot product, with its verified public candidate model. */
export interface TopicModel extends LoadedModel {
  candidateModel: PlainModel;
  /** Candidates per email (from the package header). */
  bPrime: number;
  /** ⌈log2 B⌉: bits of a topic index in the argmax circuit. */
  indexBits: number;
}

export interface TopicResult {
  messageId: string;
  /** The public candidate model's best topic: computed locally, not the provider's (private) result. */
  localGuess: string;
  /** Client CPU time for this email (features, candidates, dot product, B' extractions, evaluation), ms. */
  clientMs: number;
  bytesSent: number;
  bytesReceived: number;
}

export interface TopicSessionOptions extends SessionOptions {
  model: TopicModel;
  replay: ReplayLog;
  /** Topic requests are kept here before they leave, until their outcome is stored (kept-requests.ts). */
  keptTopics?: KeptTopicRequests;
}

/** Checks a candidate model file against the package that pins it; returns it parsed. */
export function verifyCandidates(pkg: VerifiedPackage, bytes: Uint8Array): PlainModel {
  const t = pkg.header.topics;
  if (!t) throw new Error(`model ${pkg.header.modelId} is not a topic package`);
  const digest = bytesToHex(sha256(bytes));
  if (digest !== t.candidatesSha256)
    throw new Error(`candidate model: SHA-256 ${digest} is not the package's ${t.candidatesSha256}`);
  const m = loadPlainModel(bytes);
  const h = m.header;
  if (h.task !== 'topics' || h.role !== 'public') throw new Error('candidate model: not a public topic model');
  if (h.B !== pkg.header.params.B || JSON.stringify(h.labels) !== JSON.stringify(pkg.header.labels))
    throw new Error('candidate model: its topics are not the package’s');
  if (JSON.stringify(h.featureSpec) !== JSON.stringify(pkg.header.featureSpec))
    throw new Error('candidate model: its feature spec is not the package’s');
  return m;
}

export function loadTopicModel(he: He, pkg: VerifiedPackage, candidateBytes: Uint8Array): TopicModel {
  const candidateModel = verifyCandidates(pkg, candidateBytes);
  const loaded = loadModel(he, pkg, 'topics');
  return {
    ...loaded,
    candidateModel,
    bPrime: pkg.header.topics!.bPrime,
    indexBits: Math.max(1, Math.ceil(Math.log2(loaded.params.B))),
  };
}

/**
 * The package's candidate model, from storage or downloaded from the
 * provider (GET /models/<id>/<version>/candidates), verified against the hash
 * in the package header before it is stored or used.
 */
export async function ensureCandidates(opts: {
  baseUrl: string;
  pkg: VerifiedPackage;
  storage: PackageStorage;
  fetch?: typeof fetch;
}): Promise<Uint8Array> {
  const { modelId, modelVersion } = opts.pkg.header;
  const key = `${modelId}-v${modelVersion}-candidates`;
  const stored = await opts.storage.get(key);
  if (stored) {
    verifyCandidates(opts.pkg, stored);
    return stored;
  }
  const r = await (opts.fetch ?? fetch)(new URL(`/models/${modelId}/${modelVersion}/candidates`, opts.baseUrl));
  if (r.status !== 200) throw new Error(`candidate model of ${modelId} v${modelVersion}: HTTP ${r.status}`);
  const bytes = await readExactly(r, opts.pkg.header.topics?.candidatesBytes ?? 0);
  verifyCandidates(opts.pkg, bytes);
  await opts.storage.put(key, bytes);
  return bytes;
}

/** The response body, refused as soon as it runs past `size` bytes (a provider cannot make us buffer more). */
async function readExactly(r: Response, size: number): Promise<Uint8Array> {
  const out = new Uint8Array(size);
  let n = 0;
  const reader = r.body?.getReader();
  for (;;) {
    const chunk = reader ? await reader.read() : { done: true as const, value: undefined };
    if (chunk.done) break;
    if (n + chunk.value.length > size) {
      await reader!.cancel();
      throw new Error(`candidate model: longer than the ${size} bytes the package pins`);
    }
    out.set(chunk.value, n);
    n += chunk.value.length;
  }
  if (n !== size) throw new Error(`candidate model: ${n} bytes, the package pins ${size}`);
  return out;
}

export class TopicSession extends ProviderSession {
  protected readonly otsPerEmail: number;

  private constructor(
    ws: SocketLike,
    private readonly topicOpts: TopicSessionOptions,
  ) {
    super(ws, topicOpts);
    const m = topicOpts.model;
    this.otsPerEmail = m.bPrime * (m.params.T + m.indexBits);
  }

  /** A topic session lasts the user key's budget: B′ decryptions an email (6 emails at B′ = 20). */
  protected override emailsUnderKey(): number {
    return Math.floor(this.keyBudget / this.topicOpts.model.bPrime);
  }

  /** Connects and checks the welcome pins the candidate model this client verified. */
  static async open(opts: TopicSessionOptions): Promise<TopicSession> {
    const s = await ProviderSession.connect(opts, (ws) => new TopicSession(ws, opts));
    if (s.candidatesSha256 !== opts.model.header.topics?.candidatesSha256) {
      s.close();
      throw new Error(
        'the provider pins another candidate model than the package’s (docs/threat-model.md#p5-known-and-documented-limits: refusing)',
      );
    }
    return s;
  }

  /** Tells the provider the user's topic-extraction choice (docs/protocol.md#at-most-once-classification); resolves when it is recorded. */
  async setOptOut(optOut: boolean): Promise<void> {
    await this.request('topic_setting', { optOut: optOut ? 1 : 0 });
  }

  /**
   * Extracts the topic of one delivered message privately for the provider.
   * `raw` is the decrypted RFC 822 message (its plaintext never leaves this
   * function). Throws ReplayRefused for an email already fed.
   */
  async classify(messageId: string, raw: string | Uint8Array, remaining = 1): Promise<TopicResult> {
    const m = this.topicOpts.model;
    const { T } = m.params;
    this.alive();
    const sent0 = this.sent;
    const recv0 = this.received;
    let cpu = performance.now();
    const features = await fromMessage(() => extractFeatures(raw, m.spec));
    let set: Uint32Array;
    let guess: number;
    let lwes: Uint8Array;
    let rPrimes: number[];
    const entry: ReplayEntry = { messageId, contentHash: contentHash(features, JSON.stringify(m.spec)) };
    try {
      this.topicOpts.replay.check(entry); // an email fed before is refused whatever the key's state
      // A request the key cannot serve would be refused after the ciphertexts left
      // (and the replay log would then refuse the email for good): reconnect first.
      if (this.keyBudget < m.bPrime)
        throw new ProtocolError(
          'key_rotated',
          `${this.keyBudget} decryptions left under this key, fewer than B′ = ${m.bPrime}`,
        );
      const acc = m.model.dot(features);
      try {
        // Charged before the email is admitted: a refusal leaves it unfed and sends nothing.
        await this.opts.flood?.charge(m.model.floodDistance(acc, m.bPrime));
        await this.topicOpts.replay.admit(entry);
        this.alive();
        set = candidates(m.candidateModel, features, m.bPrime);
        guess = argmax(plainScores(m.candidateModel, features));
        // One fresh encryption of zero per candidate, so the provider cannot link
        // them to S'; one packed ciphertext when S' is every topic (docs/crypto.md#packed-extraction).
        const { ciphertexts, masks } = m.model.extractTopics(acc, set, this.pk!, this.ksk!);
        lwes = ciphertexts;
        rPrimes = Array.from(masks, (r) => (2 ** T - r) % 2 ** T);
        masks.fill(0);
      } finally {
        acc.dispose();
      }
    } finally {
      features.counts.fill(0);
      features.rows.fill(0);
    }
    const localGuess = m.header.labels[guess] ?? '';
    cpu = performance.now() - cpu;
    await this.ensureOts(remaining);
    let t0 = performance.now();
    const { message: choices, pending } = argmaxChoice(this.receiver!, {
      rPrimes,
      indices: Array.from(set),
      T,
      indexBits: m.indexBits,
    });
    rPrimes.fill(0);
    set.fill(0);
    cpu += performance.now() - t0;
    this.keyBudget -= m.bPrime;
    const request = { messageId, lwes, choices };
    const kept = { request, replay: entry, localGuess };
    // Kept before it leaves: a client that stops from here on re-sends it at its next run.
    // Not kept (say, the device's storage is full), it does not leave, and the email may go once more.
    await this.keep(kept, pending).catch((e: unknown) => {
      this.topicOpts.replay.allowRetry(entry);
      throw e;
    });
    const gc = await this.garbledFor(
      'topic_request',
      request,
      pending,
      (e) => new InterruptedRequest(e, request, pending, { replay: entry, localGuess }),
    ).catch((e: unknown) => {
      // Another session used the key up after this one's welcome: the provider
      // decrypted nothing (no topic_gc, no output), so the email may go once
      // more, under the next key (the runner reconnects for it).
      if (e instanceof ProtocolError && e.code === 'key_rotated') this.topicOpts.replay.allowRetry(entry);
      throw e;
    });
    t0 = performance.now();
    const labels = await this.evaluated(kept, pending, gc);
    cpu += performance.now() - t0;
    await this.sendLabels(request, labels, { replay: entry, localGuess });
    return {
      messageId,
      localGuess,
      clientMs: cpu,
      bytesSent: this.sent - sent0,
      bytesReceived: this.received - recv0,
    };
  }

  /**
   * Re-sends a topic request whose answer (topic_gc or topic_ack) was lost
   * (topic_resend), evaluates the recorded topic_gc with the labels kept for
   * it or sends the output labels again. Undefined when no answer ever left
   * the provider: the email may then be fed once more (ReplayLog.allowRetry).
   */
  async resume(interrupted: InterruptedRequest<Messages['topic_request']>): Promise<TopicResult | undefined> {
    this.alive();
    const { request, pending } = interrupted;
    const { labels, replay, localGuess = '', answer } = interrupted.extra;
    const sent0 = this.sent;
    const recv0 = this.received;
    let gc: Uint8Array;
    try {
      gc = await this.garbledFor(
        'topic_resend',
        request,
        pending,
        (e) => new InterruptedRequest(e, request, pending, interrupted.extra),
      );
    } catch (e) {
      if (e instanceof InterruptedRequest) throw e;
      labels?.fill(0);
      if (e instanceof ProtocolError && e.code === 'not_answered') {
        // No answer left the provider: one new request may go. Not when this
        // client received a topic_gc for it: that claim is not believed, and
        // the email stays fed (the runner then reports replay_refused).
        if (!labels && !answer && replay) this.topicOpts.replay.allowRetry(replay);
        return undefined;
      }
      throw e;
    }
    const t0 = performance.now();
    // The resend only readies the provider for the labels: an answer kept on the device is the one
    // evaluated, whatever came now (a second circuit for the same input labels is never evaluated).
    const out =
      labels ?? (await this.evaluated({ request, replay: replay!, localGuess }, pending!, answer ?? gc, !!answer));
    const cpu = performance.now() - t0;
    await this.sendLabels(request, out, { replay, localGuess });
    return {
      messageId: request.messageId,
      localGuess,
      clientMs: cpu,
      bytesSent: this.sent - sent0,
      bytesReceived: this.received - recv0,
    };
  }

  /**
   * Keeps the request and its input labels on the device (kept-requests.ts),
   * with the answer once it arrived (see SpamSession#keep).
   */
  private async keep(
    kept: Omit<KeptTopicRequest, 'evaluation' | 'answer'>,
    pending: PendingEvaluation,
    answer?: Uint8Array,
  ): Promise<void> {
    const store = this.topicOpts.keptTopics;
    if (store)
      await pending.keepWith((evaluation) => store.put(kept.request.messageId, { ...kept, evaluation, answer }));
  }

  /**
   * The output labels of an answer, kept first; one that does not evaluate is
   * not kept to be tried again. `fromDevice`: the answer kept before a stop.
   */
  private async evaluated(
    kept: Omit<KeptTopicRequest, 'evaluation' | 'answer'>,
    pending: PendingEvaluation,
    gc: Uint8Array,
    fromDevice = false,
  ): Promise<Uint8Array> {
    if (!fromDevice) await this.keep(kept, pending, gc);
    try {
      return evaluateArgmax(pending, gc);
    } catch (e) {
      await this.topicOpts.keptTopics?.delete(kept.request.messageId);
      throw e;
    }
  }

  /** topic_labels → topic_ack; kept for a topic_resend when the acknowledgement may still come. */
  private async sendLabels(
    request: Messages['topic_request'],
    labels: Uint8Array,
    kept: { replay?: ReplayEntry; localGuess?: string },
  ): Promise<void> {
    const { messageId } = request;
    try {
      const ack = await this.request('topic_labels', { messageId, labels });
      if (ack.messageId !== messageId) throw new Error(`topic_ack names message ${ack.messageId}, not ${messageId}`);
    } catch (e) {
      if (retryable(e)) throw new InterruptedRequest(e as Error, request, undefined, { ...kept, labels });
      throw e;
    }
  }
}

/**
 * Connector options for topic sessions: the candidate model is fetched with
 * the package, the replay log guards every email, and requests are kept in
 * keptTopics (pass topicJournal of the same to the run).
 */
export function topicConnector(
  opts: Omit<ConnectorOptions<TopicModel, TopicSession>, 'load' | 'open'> & {
    replay: ReplayLog;
    keptTopics?: KeptTopicRequests;
  },
): Connector<TopicModel, TopicSession> {
  return createConnector<TopicModel, TopicSession>({
    modelId: 'topics',
    ...opts,
    load: async (pkg) =>
      loadTopicModel(opts.he, pkg, await ensureCandidates({ baseUrl: opts.server, pkg, storage: opts.storage })),
    open: (o) => TopicSession.open({ ...o, replay: opts.replay, keptTopics: opts.keptTopics }),
  });
}
