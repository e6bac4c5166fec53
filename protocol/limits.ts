// Wire limits of the session protocol and the model package, said once. Every
// bound is well above honest sizes; decoders check declared lengths against
// them before slicing or allocating.
import { MAX_T } from '../wasm/ts/limits.js';

/** Default frame size limit; servers and clients may configure less or more. */
export const DEFAULT_MAX_FRAME_BYTES = 4 * 1024 * 1024;

/** Largest frame a client accepts from a provider, whatever limit the provider announces. */
export const CLIENT_MAX_FRAME_BYTES = 1 << 24;

/**
 * The most OTs a client asks for in one top-up (a batch of 16,384 columns
 * less the 256 the KOS check uses; 252 KiB in the provider's memory): about
 * 600 spam or 26 topic emails. The provider keeps every session's unused
 * OTs within one budget for all of them (otPoolMiB), so a client asks for
 * what its next emails need, not for its whole mailbox.
 */
export const TOPUP_OTS = 16_384 - 256;

/** Largest JSON header of a model package (docs/wire-formats.md#model-package). */
export const MAX_HEADER_BYTES = 1 << 20;

/** Most candidates per topic request (bounds the provider's work per request). */
export const MAX_B_PRIME = 64;

/**
 * Request frames naming one delivered message that the provider's rate
 * counts once (docs/protocol.md#resource-limits): its spam, link-check and
 * topic requests and their resends after reconnects. Past this many, each
 * further frame naming it counts again.
 */
export const FRAMES_PER_MESSAGE = 8;

/**
 * A session's first `ot` frames (the base OTs and the first extension) are
 * part of its setup, paid for by its `hello` (hellosPerMinute), not counted
 * against requestsPerMinute: a topic session lasts only as many emails as
 * the user key serves (6 at B' = 20), so counting them would make a
 * backlog's cost per session, not per message. Later `ot` frames count once each.
 */
export const SETUP_OT_FRAMES = 2;

/** Upper bounds of variable-size message fields (messages.ts). */
export const LIMITS = {
  token: 256,
  id: 256, // model ids, message ids, session ids
  errorCode: 64,
  errorText: 1024,
  p0: 1 << 20, // per-client public key polynomial
  ksk: 1 << 20, // one user's key-switching key (at most 282 KB, at T = 32)
  lwe: 64 * 1024, // one bit-packed LWE ciphertext (≈ 22 KB at Q = 44)
  choices: 2 * MAX_T, // Beaver choice bits, one per client input bit
  gc: 256 * 1024, // garbled circuit bundle for one comparison
  bPrime: MAX_B_PRIME, // candidate topics per topic_request (B'; Pretzel uses 10..40)
  topicChoices: 2048, // gc_choice for the argmax: B'·(T + log2 B) bits ≤ 64·(32 + 12) bits
  topicGc: 1024 * 1024, // garbled argmax over B' ≤ 64 values of T ≤ 32 bits (≈ 240 KB)
  labels: 2 + 1 + 12 * 16, // gc_labels: one 16-byte label per bit of a topic index (B ≤ 4096)
  ot: 4 * 1024 * 1024, // base OTs / one extension batch
  listId: 64, // blocklist ids (docs/blocklist.md)
  blocklistItems: 32, // blinded elements in every blocklist_request and its reply: exactly this many (docs/blocklist.md#padding)
} as const;
