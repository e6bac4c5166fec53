// The C++ core's status codes (wasm/src/common/status.h, mirrored here and
// compared by wasm/test/status.test.ts) and the one error type the wrappers
// throw for them: callers branch on `code`, never on the message.

export const Status = {
  Ok: 0,
  BadLength: -1,
  BadVersion: -2,
  OutOfRange: -3,
  BadParams: -4,
  NoMemory: -5,
  BadState: -6,
  BadFeature: -7,
  NoiseBudget: -8,
  BadCircuit: -9,
  BadDelta: -10,
  BadBatch: -11,
} as const;

export type StatusCode = (typeof Status)[keyof typeof Status];

const MESSAGES: Record<StatusCode, string> = {
  [Status.Ok]: 'ok',
  [Status.BadLength]: 'wrong length or type tag',
  [Status.BadVersion]: 'unsupported layout version',
  [Status.OutOfRange]: 'a value is out of range',
  [Status.BadParams]: 'invalid parameters',
  [Status.NoMemory]: 'out of wasm memory',
  [Status.BadState]: 'not ready (incomplete model, or an accumulator of another model)',
  [Status.BadFeature]: 'feature row or count out of range',
  [Status.NoiseBudget]: "the email's honest noise exceeds the flooding budget 2^(F-50)",
  [Status.BadCircuit]: 'malformed circuit',
  [Status.BadDelta]: 'garbling offset with lsb 0',
  [Status.BadBatch]: 'OT extension size or counter out of range',
};

/** A failure the C++ core reported: `code` says which, the message says where. */
export class CoreError extends Error {
  override name = 'CoreError';
  constructor(
    readonly code: StatusCode,
    what: string,
  ) {
    super(`${what}: ${MESSAGES[code] ?? `error ${code}`}`);
  }
}

/** Throws a CoreError unless `status` is Ok; returns non-negative results (counts) unchanged. */
export function check(status: number, what: string): number {
  if (status < 0) throw new CoreError(status as StatusCode, what);
  return status;
}
