// The C++ core's status codes (wasm/src/common/status.h, mirrored here and
// compared by wasm/test/status.test.ts) and the one error type the wrappers
// throw for them: callers branch on `code`, never on the message.

/** Each status by name: its code (as in status.h) and what it means. */
const STATUSES = {
  Ok: [0, 'ok'],
  BadLength: [-1, 'wrong length or type tag'],
  BadVersion: [-2, 'unsupported layout version'],
  OutOfRange: [-3, 'a value is out of range'],
  BadParams: [-4, 'invalid parameters'],
  NoMemory: [-5, 'out of wasm memory'],
  BadState: [-6, 'not ready (incomplete model, or an accumulator of another model)'],
  BadFeature: [-7, 'feature row or count out of range'],
  NoiseBudget: [-8, "the email's honest noise exceeds the flooding budget 2^(F-50)"],
  BadCircuit: [-9, 'malformed circuit'],
  BadDelta: [-10, 'garbling offset with lsb 0'],
  BadBatch: [-11, 'OT extension size or counter out of range'],
} as const;

type Statuses = typeof STATUSES;

export const Status = Object.fromEntries(Object.entries(STATUSES).map(([name, [code]]) => [name, code])) as {
  readonly [K in keyof Statuses]: Statuses[K][0];
};

export type StatusCode = (typeof Status)[keyof typeof Status];

const MESSAGES = new Map<number, string>(Object.values(STATUSES));

/** A failure the C++ core reported: `code` says which, the message says where. */
export class CoreError extends Error {
  override name = 'CoreError';
  constructor(
    readonly code: StatusCode,
    what: string,
  ) {
    super(`${what}: ${MESSAGES.get(code) ?? `error ${code}`}`);
  }
}

/** Throws a CoreError unless `status` is Ok; returns non-negative results (counts) unchanged. */
export function check(status: number, what: string): number {
  if (status < 0) throw new CoreError(status as StatusCode, what);
  return status;
}
