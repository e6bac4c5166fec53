// What the private-function benches (spam, topics) share: one client–provider
// pair in this process with the real crypto (model encrypted under a fresh
// key, a local session, an OT session), process CPU time, random models and
// emails.
import type { Features } from '../models/features/index.js';
import { encodeMessage } from '../protocol/messages.js';
import { evaluateSpam, garbleSpam, spamChoice } from '../wasm/ts/gc.js';
import { type ClientModel, type He, type HeParams, type ProviderKey } from '../wasm/ts/he.js';
import { localSession, type LocalSession } from '../wasm/test/he/local-session.js';
import { OtReceiver, OtSender } from '../wasm/ts/ot.js';

/**
 * CPU time of this process in ms (user + system). Both roles run on this one
 * thread, so deltas are each role's CPU, unaffected by other load on the
 * machine (wall clock is not, on a shared box).
 */
export const now = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** One client–provider pair sharing a model version and an OT session. */
export class Pair {
  readonly sender: OtSender;
  readonly receiver: OtReceiver;
  /** Provider time spent on OT extension and the OTs it produced (for amortization). */
  otProviderMs = 0;
  otCount = 0;
  otBytes = 0;
  constructor(
    readonly he: He,
    readonly params: HeParams,
    readonly sk: ProviderKey,
    readonly model: ClientModel,
    readonly session: LocalSession,
  ) {
    const sessionId = he.randomSeed();
    this.sender = new OtSender(he.core, sessionId);
    this.receiver = new OtReceiver(he.core, sessionId);
    this.receiver.finish(this.sender.respond(this.receiver.start())); // base OTs, once per session
  }

  /** Tops the OT pool up by whole batches (as the session does). */
  ensureOts(n: number): void {
    while (this.receiver.available < n) {
      const msg = this.receiver.extend(16_384);
      this.otBytes +=
        encodeMessage('ot', 0, { payload: msg }).length +
        encodeMessage('ot_reply', 0, { payload: new Uint8Array(0) }).length;
      const t = now();
      this.otCount += this.sender.acceptExtension(msg);
      this.otProviderMs += now() - t;
    }
  }

  /** Provider OT-extension time for `ots` OTs, amortized over the batches so far. */
  otProviderMsFor(ots: number): number {
    return this.otCount ? (this.otProviderMs / this.otCount) * ots : 0;
  }

  otBytesFor(ots: number): number {
    return this.otCount ? (this.otBytes / this.otCount) * ots : 0;
  }

  dispose(): void {
    this.model.dispose();
    this.session.dispose();
    this.sk.dispose();
    this.sender.close();
    this.receiver.close();
  }
}

/**
 * The whole per-email spam protocol on a pair: the verdict, each role's time
 * by `clock` (process CPU by default; a browser worker has only wall time)
 * and the frame bytes.
 */
export function spamRound(
  pair: Pair,
  f: Features,
  clock: () => number = now,
): { spam: boolean; clientMs: number; providerMs: number; bytes: number; lweBytes: number } {
  const T = pair.params.T;
  pair.ensureOts(T);
  let t = clock();
  const acc = pair.model.dot(f);
  const [{ lwe, mask }] = pair.model.extract(acc, [0], pair.session.pk, pair.session.ksk);
  acc.dispose();
  const { message: choices, pending } = spamChoice(pair.receiver, { rPrime: (2 ** T - mask) % 2 ** T, T });
  let clientMs = clock() - t;
  t = clock();
  const gc = garbleSpam({ y: pair.session.user.forContext(pair.params).decryptLwe(lwe), T }, pair.sender, choices);
  const providerMs = clock() - t;
  t = clock();
  const { spam } = evaluateSpam(pending, gc);
  clientMs += clock() - t;
  const bytes =
    encodeMessage('spam_request', 0, { messageId: 'x'.repeat(40), lwe, choices }).length +
    encodeMessage('spam_gc', 0, { messageId: 'x'.repeat(40), gc }).length +
    encodeMessage('spam_done', 0, { messageId: 'x'.repeat(40) }).length;
  return { spam, clientMs, providerMs, bytes, lweBytes: lwe.length };
}

/**
 * What a user key's key-switching key adds on the wire: the welcome frame
 * that carries it (once per key epoch) minus the same frame without it, for
 * a real KSK of the pair's model.
 */
export function kskWireBytes(pair: Pair): number {
  const ksk = pair.sk.keySwitchKey(
    pair.he.randomSeed(),
    pair.session.user,
    { salt: pair.he.randomSeed(), epoch: 1 },
    pair.params.T,
  );
  const welcome = (k: Uint8Array): number =>
    encodeMessage('welcome', 0, {
      sessionId: 'x'.repeat(43),
      modelVersion: 1,
      packageSha256: new Uint8Array(32),
      candidatesSha256: new Uint8Array(0),
      p0: new Uint8Array(1),
      keyEpoch: 1,
      ksk: k,
      keyBudget: 128,
      maxFrameBytes: 1 << 20,
      requestsPerMinute: 600,
    }).length;
  return welcome(ksk) - welcome(new Uint8Array(0));
}

export function newPair(he: He, params: HeParams, weights: Int32Array, opts: { aCacheBytes?: number } = {}): Pair {
  const skBytes = he.generateSecretKey();
  const sk = he.loadSecretKey(skBytes);
  skBytes.fill(0);
  const model = he.newClientModel(params, opts);
  for (const record of sk.forContext(params).encryptModel(weights)) model.push(record);
  model.finish();
  return new Pair(he, params, sk, model, localSession(he, sk, he.randomSeed(), params.T));
}

/** `count` random signed b_in-bit weights. */
export function randomWeights(count: number, bIn: number): Int32Array {
  const q = 2 ** (bIn - 1) - 1;
  const w = new Int32Array(count);
  const rnd = new Uint32Array(w.length);
  for (let i = 0; i < rnd.length; i += 16384) crypto.getRandomValues(rnd.subarray(i, i + 16384));
  for (let i = 0; i < w.length; i++) w[i] = (rnd[i] % (2 * q + 1)) - q;
  return w;
}

/** L distinct random rows in 1..N with random counts below 2^fIn. */
export function randomFeatures(N: number, L: number, fIn: number): Features {
  const rows = new Set<number>();
  while (rows.size < L) rows.add(1 + Math.floor(Math.random() * N));
  const sorted = Uint32Array.from(rows).sort();
  return { rows: sorted, counts: sorted.map(() => 1 + Math.floor(Math.random() * (2 ** fIn - 1))) };
}

/** A plaintext email with about L distinct word tokens (for NoPriv's feature extraction). */
export function syntheticEmail(L: number, seed: number): string {
  const words = Array.from({ length: L }, (_, i) => `w${seed.toString(36)}x${i.toString(36)}q`);
  const body = words.map((w, i) => (i % 12 === 11 ? `${w}\n` : `${w} `)).join('');
  return `From: sender${seed}@example.org\r\nTo: user@example.org\r\nSubject: message ${seed}\r\n\r\n${body}`;
}
