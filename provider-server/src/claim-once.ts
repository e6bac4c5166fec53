// The exactly-once sequence every decrypting or evaluating request runs
// (docs/protocol.md#exactly-once-verdicts): claim the message for the task,
// bound to the request's digest; charge and compute; release the claim when
// nothing left the provider; record the answer durably before it may be sent.
import { createHash } from 'node:crypto';
import { ProtocolError } from '../../protocol/errors.js';
import { chargeAndClaim, type RateLimits, type RatedUser } from './message-rate.js';
import type { ClaimResult, KeySpend, Store, Task } from './store.js';

/**
 * The SHA-256 a claim is bound to: task, message id and every request field,
 * each length-prefixed, so no two different requests share it.
 */
export function requestDigest(task: Task, messageId: string, ...fields: Uint8Array[]): Buffer {
  const h = createHash('sha256').update(`pmf-request-v1\0${task}\0`);
  for (const f of [Buffer.from(messageId, 'utf8'), ...fields]) {
    const len = Buffer.alloc(4);
    len.writeUInt32BE(f.length);
    h.update(len).update(f);
  }
  return h.digest();
}

export interface OnceRequest {
  userId: number;
  messageId: string;
  task: Task;
  /** requestDigest of the request. */
  request: Buffer;
}

export interface OnceSteps<T> {
  /** Decryptions spent from a user key's budget with the claim (Store.claimAndSpend); a used-up key is `key_rotated`. */
  spend?: KeySpend;
  /**
   * With `spend`: the request frame's rate charge, taken with the claim
   * (message-rate.ts chargeAndClaim); a refused charge claims nothing.
   */
  rate?: { limits: RateLimits; user: RatedUser };
  /** Charges before the work (a daily cap); throwing releases the claim. */
  charge?(): Promise<void>;
  work(): Promise<T>;
  /** What is recorded: the answer's bytes (a resend gets them again), or null (nothing to replay). */
  recorded(answer: T): Uint8Array | null;
  /** Whether the answer can still be sent (the session is open); if not, the claim is released. */
  open(): boolean;
  /** With recorded bytes: the user's recorded answers that were never acknowledged are capped to this many. */
  keepAnswers?: number;
}

/**
 * Runs `steps` once under a claim. Resolves to the answer, to 'closed' when
 * the session closed meanwhile (the claim released, nothing to send), or to
 * 'already_classified' when the message's claim is held by an answered
 * request. Throws unknown_message, whatever a step threw (the claim
 * released: the client learnt nothing and may ask again), and
 * already_classified when a request took the claim over meanwhile: that
 * request wins, and this answer must never be sent.
 */
export async function claimOnce<T>(
  store: Store,
  { userId, messageId, task, request }: OnceRequest,
  steps: OnceSteps<T>,
): Promise<{ answer: T } | 'closed' | 'already_classified'> {
  const claim = await claimFor(store, { userId, messageId, task, request }, steps);
  if (claim === 'rotated')
    throw new ProtocolError('key_rotated', 'this key epoch is used up: reconnect to get the next key');
  if (claim === 'unknown_message')
    throw new ProtocolError('unknown_message', `message ${messageId} was not delivered to this user`);
  if (claim === 'already_classified') return claim;
  const release = (): Promise<void> => store.releaseClaim(userId, messageId, task, claim.attempt);
  let answer: T;
  try {
    await steps.charge?.();
    answer = await steps.work();
  } catch (e) {
    await release();
    throw e;
  }
  if (!steps.open()) {
    await release();
    return 'closed';
  }
  const bytes = steps.recorded(answer);
  const recorded = await store.recordAnswer(
    userId,
    messageId,
    task,
    claim.attempt,
    bytes,
    bytes === null ? undefined : steps.keepAnswers,
  );
  if (!recorded)
    throw new ProtocolError('already_classified', `message ${messageId} was claimed by another request (${task})`);
  return { answer };
}

/** The claim of claimOnce, with its key spend and rate charge when `steps` have them. */
function claimFor(
  store: Store,
  { userId, messageId, task, request }: OnceRequest,
  { spend, rate }: OnceSteps<unknown>,
): Promise<ClaimResult | 'rotated'> {
  if (!spend) return store.claim(userId, messageId, task, request);
  if (!rate) return store.claimAndSpend(userId, messageId, task, request, spend);
  return chargeAndClaim(store, rate.limits, rate.user, { messageId, task, request, spend });
}

/** A topic answer as recorded: u32 BE length of the topic_gc, the topic_gc, then its decoder (never sent). */
export function packTopicAnswer(gc: Uint8Array, decoder: Uint8Array): Uint8Array {
  const out = new Uint8Array(4 + gc.length + decoder.length);
  new DataView(out.buffer).setUint32(0, gc.length);
  out.set(gc, 4);
  out.set(decoder, 4 + gc.length);
  decoder.fill(0);
  return out;
}

export function unpackTopicAnswer(answer: Uint8Array): { gc: Uint8Array; decoder: Uint8Array } {
  const length = new DataView(answer.buffer, answer.byteOffset, answer.byteLength).getUint32(0);
  return { gc: answer.slice(4, 4 + length), decoder: answer.slice(4 + length) };
}
