// Error codes carried in `error` frames. Each names the problem precisely so a
// client (or an operator reading logs) knows what to fix; none ever carries
// secret material — messages are built from codes, sizes and public ids only.

export const ERROR_CODES = [
  'malformed_frame', // header or body does not parse
  'unsupported_version', // frame version byte unknown
  'unknown_type', // message type byte unknown
  'frame_too_large', // frame exceeds the configured maximum
  'bad_field', // a field is out of range / wrong size
  'out_of_order', // message not allowed in the session's current state
  'unauthenticated', // missing or invalid bearer token
  'unknown_model', // model id not served here
  'model_outdated', // client asked for an older model version: download the new one
  'unknown_message', // message id not delivered to this user
  'already_classified', // message id was classified before (docs/protocol.md#at-most-once-classification)
  'rate_limited', // per-user rate limit hit
  'daily_limit', // a per-user daily allowance is used up (blocklist evaluations): retry at the time the message names
  'key_rotated', // the user's decryption key reached its budget: reconnect for the next key epoch
  'opted_out', // topic_request from a user who opted out of topic extraction (docs/protocol.md#topic-extraction)
  'not_answered', // spam_resend for a request whose answer never left the provider: send a new spam_request
  'crypto_rejected', // a cryptographic check failed (e.g. OT consistency)
  'session_lost', // the provider lost this session's crypto state (a crypto worker restarted): reconnect, send the request again
  'ot_pool_full', // the provider holds as many unused OTs as its memory budget allows: reconnect later
  'internal', // server-side failure; details stay in the server log
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];

/** An error meant to be sent to the peer as an error frame. */
export class ProtocolError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'ProtocolError';
  }
}

export function isErrorCode(s: string): s is ErrorCode {
  return (ERROR_CODES as readonly string[]).includes(s);
}
