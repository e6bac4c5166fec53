// The provider's resource limits, said once: what each configurable limit
// means, its default and the range a configuration may set it in, and the
// fixed bounds no configuration changes.
import { DEFAULT_MAX_FRAME_BYTES, LIMITS } from '../../protocol/limits.js';

export interface ServerLimits {
  maxFrameBytes: number;
  /** Spam requests per user per minute. */
  requestsPerMinute: number;
  maxSessions: number;
  /** A session with no frame for this long is closed. */
  idleTimeoutMs: number;
  /** hello frames per user per minute (each costs a public key and maybe a KSK). */
  hellosPerMinute: number;
  /** New WebSocket connections per client address per minute. */
  connectionsPerMinutePerAddress: number;
  /** Open WebSocket connections per client address at any time. */
  connectionsPerAddress: number;
  /** Open connections that have not completed hello yet (they get a deadline). */
  maxUnauthenticated: number;
  /** A connection without a successful hello this long after opening is closed. */
  helloTimeoutMs: number;
  /** ping frames per session per minute (pings keep a session alive: bounded). */
  pingsPerMinute: number;
  /** Frames received and not yet handled per session; reading pauses at this many. */
  maxPendingFrames: number;
  /** Bytes queued for a client that does not read; past this the connection is dropped. */
  maxSendBufferBytes: number;
  /**
   * Decryptions under one user key before it rotates: each leaks at most one
   * bit of that key to a malicious client (docs/security.md).
   */
  userKeyBudget: number;
  /**
   * A recorded answer nobody acknowledged is dropped this long after its
   * claim (the claim stays): it bounds the store, and a client away longer
   * loses that one verdict (docs/protocol.md#exactly-once-verdicts).
   */
  answerRetentionMs: number;
  /**
   * Recorded answers one user may leave unacknowledged; recording one more
   * drops the oldest (a topic answer is about 57 KB, a spam answer 1.2 KB).
   */
  unacknowledgedAnswersPerUser: number;
  /**
   * Blocklist OPRF evaluations per user per UTC day, counted in the store
   * (32 per looked-up message): what bounds a client testing guesses
   * against the list (docs/blocklist.md#daily-cap).
   */
  blocklistEvaluationsPerDay: number;
}

/**
 * The most decryptions one user key may serve (and the default): 128 bits of
 * leakage at most, against the ≈ 3,250 that a ternary key of dimension 2,048
 * carries. Counted as perfect hints, they leave the user-key instance (the
 * KSK, log2 q_ks = 50) at 131.7 bits classical by the estimate in
 * docs/crypto.md#security-of-the-keys; wasm/test/he-estimate.test.ts fails
 * when this changes without the estimate. Never configurable higher.
 */
export const USER_KEY_BUDGET_MAX = 128;

export const LIMIT_DEFAULTS: ServerLimits = {
  maxFrameBytes: DEFAULT_MAX_FRAME_BYTES,
  requestsPerMinute: 600,
  maxSessions: 1000,
  idleTimeoutMs: 120_000,
  // A batch opens up to three sessions (spam, link check, topics): a person
  // opening one message after another stays well under it.
  hellosPerMinute: 90,
  connectionsPerMinutePerAddress: 120,
  connectionsPerAddress: 32,
  maxUnauthenticated: 256,
  helloTimeoutMs: 10_000,
  pingsPerMinute: 60,
  maxPendingFrames: 4,
  maxSendBufferBytes: 16 * 1024 * 1024,
  userKeyBudget: USER_KEY_BUDGET_MAX,
  answerRetentionMs: 7 * 86_400_000,
  // An honest client acknowledges each answer once it has it: only requests in flight are open.
  unacknowledgedAnswersPerUser: 64,
  // 2,000 messages a day: more than a person receives; a backlog goes on the next day.
  blocklistEvaluationsPerDay: 2_000 * LIMITS.blocklistItems,
};

/** The integer range a configuration may set each limit in, in the order they are checked. */
export const LIMIT_RANGES: Record<keyof ServerLimits, readonly [number, number]> = {
  maxFrameBytes: [1024, 64 * 1024 * 1024],
  requestsPerMinute: [1, 1_000_000],
  maxSessions: [1, 1_000_000],
  idleTimeoutMs: [1000, 86_400_000],
  hellosPerMinute: [1, 1_000_000],
  connectionsPerMinutePerAddress: [1, 1_000_000],
  connectionsPerAddress: [1, 1_000_000],
  maxUnauthenticated: [1, 1_000_000],
  helloTimeoutMs: [100, 600_000],
  pingsPerMinute: [1, 1_000_000],
  maxPendingFrames: [1, 1024],
  maxSendBufferBytes: [2048, 1 << 30],
  userKeyBudget: [1, USER_KEY_BUDGET_MAX],
  answerRetentionMs: [60_000, 365 * 86_400_000],
  unacknowledgedAnswersPerUser: [1, 100_000],
  blocklistEvaluationsPerDay: [LIMITS.blocklistItems, 1_000_000_000],
};

/** A session sending this many bad frames is closed. */
export const MAX_SESSION_ERRORS = 16;

/**
 * Derived user keys one crypto worker keeps loaded (135 KB each in wasm
 * memory, 35 MB at most). Sessions stick to one worker, so 256 covers a few
 * hundred concurrent sessions per instance: at 64, 200 users taking turns
 * re-derived a key (~0.8 ms) on every request, more than the decryption and
 * garbling it serves (~0.12 ms).
 */
export const USER_KEY_CACHE = 256;
