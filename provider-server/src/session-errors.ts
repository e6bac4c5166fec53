// How a session answers a failed frame: the error code and message the
// client gets, and which codes end the session or are normal while a client
// resynchronises its mailbox.
import { isErrorCode, ProtocolError, type ErrorCode } from '../../protocol/errors.js';

/** Errors after which the session is closed (nothing more can usefully happen). */
export const FATAL: ReadonlySet<ErrorCode> = new Set([
  'crypto_rejected',
  'key_rotated',
  'session_lost',
  'ot_pool_full',
]);
/**
 * Answers a client gets while resynchronising its mailbox after a reconnect:
 * normal, so they do not count as bad frames (each request still costs rate).
 */
export const RESYNC: ReadonlySet<ErrorCode> = new Set(['already_classified', 'unknown_message', 'not_answered']);

/**
 * The code and message an error frame carries: a ProtocolError's, or the code
 * a failure carries (a worker's), else `internal` with no detail (the detail
 * goes to the log only: messages are secret-free by construction).
 */
export function errorOf(e: unknown): { code: ErrorCode; message: string } {
  if (e instanceof ProtocolError) return { code: e.code, message: e.message };
  const c = (e as { code?: unknown })?.code;
  if (typeof c === 'string' && isErrorCode(c) && c !== 'internal') return { code: c, message: (e as Error).message };
  return { code: 'internal', message: 'internal error' };
}
