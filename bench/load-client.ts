// The load generator's clients for the `load` bench. The provider does all of
// its real work; the generator saves its own CPU so that one process can keep
// hundreds of sessions busy on the same machine:
// - LoadSession runs the real client handshake (hello, p0 checked, key-
//   switching key, base OTs, OT extension) and real OT top-ups, garbled
//   evaluation and spam_done per email, but extracts ONE LWE ciphertext per
//   session (features, dot product and extraction done once) and sends it for
//   every message. A real client re-randomizes per email; the provider cannot
//   tell and does the same work (decrypt, garble). It evaluates the garbled
//   circuit (and checks the output is valid) only when asked: the bench asks
//   for one email in CHECK_EVERY (bench/suites/load.ts). The others are
//   received and decoded and get their spam_done, as a client's would.
// - setUpSession does what a new session costs the provider (hello → welcome,
//   base OTs → ot_base_b) and hangs up without the client's half of the base
//   OTs (~300 ms of client CPU in JS that the provider never sees).
// - Frames are masked as any client's (RFC 6455): ws skips unmasking a zero
//   mask, so a generator sending those would spare the provider work that
//   real clients give it.
import WebSocket from 'ws';
import { decodeMessage, encodeMessage, type Message, type MessageName, type Messages } from '../protocol/messages.js';
import { CLIENT_MAX_FRAME_BYTES } from '../protocol/limits.js';
import { InterruptedRequest } from '../client/core/interrupted-request.js';
import { ProviderSession, type LoadedModel, type SessionOptions } from '../client/core/provider-session.js';
import { evaluateSpam, spamChoice } from '../wasm/ts/gc.js';
import type { Accumulator, He } from '../wasm/ts/he.js';
import { MAX_POOL, maxExtendWithin, OtReceiver } from '../wasm/ts/ot.js';

export class LoadSession extends ProviderSession {
  protected readonly otsPerEmail = this.opts.model.params.T;
  private ciphertext: { lwe: Uint8Array; rPrime: number } | undefined;

  /** `acc` is one email's encrypted dot product, shared by every session; extracts this session's ciphertext. */
  static async open(opts: SessionOptions, acc: Accumulator): Promise<LoadSession> {
    const s = await ProviderSession.connect(opts, (ws) => new LoadSession(ws, opts));
    const { model, params } = opts.model;
    const [{ lwe, mask }] = model.extract(acc, [0], s.pk!, s.ksk!);
    s.ciphertext = { lwe, rPrime: (2 ** params.T - mask) % 2 ** params.T };
    return s;
  }

  /** Decryptions left under this session's user key. */
  get budget(): number {
    return this.keyBudget;
  }

  /**
   * One private classification of `messageId`; false when `check` evaluated
   * the garbled circuit and its output was invalid.
   */
  async classify(messageId: string, remaining: number, check: boolean): Promise<boolean> {
    this.alive();
    const { params } = this.opts.model;
    const request = this.ciphertext!;
    await this.ensureOts(remaining);
    this.keyBudget--;
    const { message: choices, pending } = spamChoice(this.receiver!, { rPrime: request.rPrime, T: params.T });
    const fields = { messageId, lwe: request.lwe, choices };
    const gc = await this.garbledFor(
      'spam_request',
      fields,
      pending,
      (e) => new InterruptedRequest(e, fields, pending),
    );
    const valid = !check || !evaluateSpam(pending, gc).invalid;
    this.sendFrame('spam_done', this.nextRequest++, { messageId });
    return valid;
  }
}

/** Runs `tasks` with at most `n` at a time. */
export async function inFlight(n: number, tasks: (() => Promise<unknown>)[]): Promise<void> {
  let i = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, tasks.length) }, async () => {
      while (i < tasks.length) await tasks[i++]();
    }),
  );
}

/** A socket with one outstanding request at a time. */
class RawSocket {
  private next: ((m: Message) => void) | undefined;
  private failed: Error | undefined;
  private requestId = 1;
  private constructor(private readonly ws: WebSocket) {
    ws.on('message', (data: Buffer) => this.next?.(decodeMessage(new Uint8Array(data), CLIENT_MAX_FRAME_BYTES)));
    ws.on('close', () => this.fail(new Error('connection closed')));
    ws.on('error', (e) => this.fail(e));
  }

  static open(url: string): Promise<RawSocket> {
    const ws = new WebSocket(url);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(new RawSocket(ws)));
      ws.once('error', reject);
    });
  }

  private fail(e: Error): void {
    this.failed ??= e;
    this.next = undefined;
  }

  async request<K extends MessageName, R extends MessageName>(
    name: K,
    fields: Messages[K],
    expect: R,
  ): Promise<Extract<Message, { name: R }>> {
    if (this.failed) throw this.failed;
    const reply = new Promise<Message>((resolve, reject) => {
      this.next = resolve;
      this.ws.once('close', () => reject(this.failed ?? new Error('connection closed')));
    });
    this.ws.send(encodeMessage(name, this.requestId++, fields));
    const m = await reply;
    if (m.name === 'error') throw new Error(`${name}: ${m.code} ${m.message}`);
    if (m.name !== expect) throw new Error(`${name}: expected ${expect}, got ${m.name}`);
    return m as Extract<Message, { name: R }>;
  }

  close(): void {
    if (this.ws.readyState === WebSocket.OPEN) this.ws.send(encodeMessage('bye', this.requestId++, {}));
    this.ws.close();
  }
}

/** hello → welcome, and the base-OT request → its reply: the provider's whole part of a new session. */
async function setUp(s: RawSocket, he: He, token: string, model: LoadedModel, keyEpoch: number) {
  const w = await s.request(
    'hello',
    {
      token,
      modelId: model.header.modelId,
      modelVersion: model.header.modelVersion,
      clientNonce: he.randomSeed(),
      keyEpoch,
    },
    'welcome',
  );
  const receiver = new OtReceiver(he.core, new TextEncoder().encode(w.sessionId));
  const b = await s.request('ot', { payload: receiver.start() }, 'ot_reply');
  return { w, receiver, baseB: b.payload };
}

/**
 * The provider's half of a new session: welcome (public key, and the user key
 * when `keyEpoch` is not the current one) and the base-OT reply. Returns the
 * key epoch the provider announced.
 */
export async function setUpSession(
  he: He,
  sessionUrl: string,
  token: string,
  model: LoadedModel,
  keyEpoch: number,
): Promise<number> {
  const s = await RawSocket.open(sessionUrl);
  try {
    const { w, receiver } = await setUp(s, he, token, model, keyEpoch);
    receiver.close(); // the client's half of the base OTs is skipped: the provider never sees it
    return w.keyEpoch;
  } finally {
    s.close();
  }
}

/**
 * A session that fills its OT pool as far as the provider lets it, as a
 * heavy or hostile client can: hello, base OTs, then extensions of the
 * largest size that fits a frame until the pool holds two batches
 * (MAX_POOL) or the provider refuses one. Left open until `close()`.
 */
export async function fillOtPool(
  he: He,
  sessionUrl: string,
  token: string,
  model: LoadedModel,
): Promise<{ ots: number; refused: string | undefined; close(): void }> {
  const s = await RawSocket.open(sessionUrl);
  try {
    const { w, receiver, baseB } = await setUp(s, he, token, model, 0);
    try {
      receiver.finish(baseB);
      const fit = maxExtendWithin(w.maxFrameBytes);
      let ots = 0;
      let refused: string | undefined;
      while (receiver.available + fit <= MAX_POOL && !refused) {
        try {
          await s.request('ot', { payload: receiver.extend(fit) }, 'ot_reply');
          ots += fit;
        } catch (e) {
          refused = (e as Error).message;
        }
      }
      return { ots, refused, close: () => s.close() };
    } finally {
      receiver.close();
    }
  } catch (e) {
    s.close();
    throw e;
  }
}
