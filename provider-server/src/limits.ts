// The provider's resource limits, said once: what each configurable limit
// means, its default and the range a configuration may set it in, and the
// fixed bounds no configuration changes.
import { DEFAULT_MAX_FRAME_BYTES, LIMITS } from '../../protocol/limits.js';

export interface ServerLimits {
  maxFrameBytes: number;
  /**
   * Units per user per minute: a delivered message's spam, link-check and
   * topic requests count one together, each OT or topic_setting frame one
   * (message-rate.ts).
   */
  requestsPerMinute: number;
  maxSessions: number;
  /** A session with no frame for this long is closed. */
  idleTimeoutMs: number;
  /** hello frames per user per minute (each costs a public key and maybe a KSK). */
  hellosPerMinute: number;
  /** New WebSocket connections per client address per minute (counted in the store, across instances). */
  connectionsPerMinutePerAddress: number;
  /** New WebSocket connections per /24 (IPv4) or /64 (IPv6) per minute (likewise). */
  connectionsPerMinutePerPrefix: number;
  /** Open WebSocket connections per client address at any time. */
  connectionsPerAddress: number;
  /**
   * Open connections that have not completed hello yet (they get a
   * deadline); when all are taken, a newcomer from a less crowded network
   * takes the place of the oldest from the most crowded (connection-gate.ts).
   */
  maxUnauthenticated: number;
  /** Of those, at most this many from one /24 or /64. */
  unauthenticatedPerPrefix: number;
  /** A connection without a successful hello this long after opening is closed. */
  helloTimeoutMs: number;
  /** ping frames per session per minute (pings keep a session alive: bounded). */
  pingsPerMinute: number;
  /** Frames received and not yet handled per session; reading pauses at this many. */
  maxPendingFrames: number;
  /** Bytes queued for a client that does not read; past this the connection is dropped. */
  maxSendBufferBytes: number;
  /**
   * Unused OTs all sessions may hold together, in MiB (16 bytes per OT; a
   * session holds at most two batches, 4 MiB): an extension past it is
   * refused with ot_pool_full and the client reconnects later.
   */
  otPoolMiB: number;
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
  /**
   * New messages (spam, link check and topics of each together) per user per
   * UTC day, counted in the store (message-rate.ts): with the user-key budget,
   * what bounds the verdicts a client can obtain (docs/security.md#the-rate-counts-messages).
   */
  messagesPerDay: number;
  /**
   * Messages past the daily caps each key salt may have checked once in its
   * life (and as many link checks): a new account's backlog goes through in
   * one sitting, a malicious client gets this many more verdicts once.
   */
  backlogAllowance: number;
  /** A bearer token unused for this long no longer authenticates (each use refreshes it, tokens.ts). */
  tokenLifetimeMs: number;
  /** Live bearer tokens one user may hold; issuing more revokes the least recently used. */
  tokensPerUser: number;
  /**
   * Kept message bodies (the demo webmail's; a mail store such as Dovecot
   * holds everyone else's) are dropped this long after delivery; the ids,
   * sizes and claims stay.
   */
  messageBodyRetentionMs: number;
  /**
   * /healthz writes and reads the store and pings every crypto worker; each
   * must answer within this long, or the instance reports failing (503).
   */
  healthTimeoutMs: number;
  /**
   * Wrong admin tokens or webmail secrets per client address per minute;
   * past it, the address gets 429 until the minute ends, whatever it sends.
   */
  authFailuresPerMinute: number;
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
  // A 1,000-message backlog in about a minute: each message counts once, whatever it is checked for.
  requestsPerMinute: 1_200,
  maxSessions: 1000,
  idleTimeoutMs: 120_000,
  // A batch opens up to three sessions (spam, link check, topics), and a topic
  // session lasts 6 emails (the user key's budget at B' = 20): a backlog of
  // 1,000 messages a minute opens about 170.
  hellosPerMinute: 240,
  connectionsPerMinutePerAddress: 240,
  // An office or a carrier's NAT behind one /24: many users, a few connections each.
  connectionsPerMinutePerPrefix: 1200,
  connectionsPerAddress: 32,
  maxUnauthenticated: 256,
  unauthenticatedPerPrefix: 64,
  helloTimeoutMs: 10_000,
  pingsPerMinute: 60,
  maxPendingFrames: 4,
  maxSendBufferBytes: 16 * 1024 * 1024,
  // Clients top up 256 KiB at a time (client/core/session.ts TOPUP_OTS): hundreds of sessions fit.
  otPoolMiB: 160,
  userKeyBudget: USER_KEY_BUDGET_MAX,
  answerRetentionMs: 7 * 86_400_000,
  // An honest client acknowledges each answer once it has it: only requests in flight are open.
  unacknowledgedAnswersPerUser: 64,
  // 2,000 messages a day: more than a person receives; a backlog goes on the next day.
  blocklistEvaluationsPerDay: 2_000 * LIMITS.blocklistItems,
  messagesPerDay: 2_000,
  // A 10,000-message mailbox on its first day.
  backlogAllowance: 10_000,
  tokenLifetimeMs: 90 * 86_400_000,
  // Browsers, Thunderbird, a CLI: a few each; a webmail's one-click connect mints one per click.
  tokensPerUser: 20,
  messageBodyRetentionMs: 30 * 86_400_000,
  // Inside HAProxy's check interval (deploy/haproxy.cfg: inter 2s).
  healthTimeoutMs: 1500,
  authFailuresPerMinute: 10,
};

/** The integer range a configuration may set each limit in, in the order they are checked. */
export const LIMIT_RANGES: Record<keyof ServerLimits, readonly [number, number]> = {
  maxFrameBytes: [1024, 64 * 1024 * 1024],
  requestsPerMinute: [1, 1_000_000],
  maxSessions: [1, 1_000_000],
  idleTimeoutMs: [1000, 86_400_000],
  hellosPerMinute: [1, 1_000_000],
  connectionsPerMinutePerAddress: [1, 1_000_000],
  connectionsPerMinutePerPrefix: [1, 1_000_000],
  connectionsPerAddress: [1, 1_000_000],
  maxUnauthenticated: [1, 1_000_000],
  unauthenticatedPerPrefix: [1, 1_000_000],
  helloTimeoutMs: [100, 600_000],
  pingsPerMinute: [1, 1_000_000],
  maxPendingFrames: [1, 1024],
  maxSendBufferBytes: [2048, 1 << 30],
  otPoolMiB: [1, 64 * 1024],
  userKeyBudget: [1, USER_KEY_BUDGET_MAX],
  answerRetentionMs: [60_000, 365 * 86_400_000],
  unacknowledgedAnswersPerUser: [1, 100_000],
  blocklistEvaluationsPerDay: [LIMITS.blocklistItems, 1_000_000_000],
  messagesPerDay: [1, 1_000_000],
  backlogAllowance: [0, 1_000_000],
  tokenLifetimeMs: [3_600_000, 3650 * 86_400_000],
  tokensPerUser: [1, 1000],
  messageBodyRetentionMs: [60_000, 3650 * 86_400_000],
  healthTimeoutMs: [100, 60_000],
  authFailuresPerMinute: [1, 10_000],
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
