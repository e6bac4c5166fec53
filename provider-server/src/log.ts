// The provider's log: one JSON object per line on stderr (pino), with the
// time (ISO 8601), the level as a word, the process (`name`, `pid`) and the
// message, so journald, Loki or any log shipper can filter by level and
// field. Failed requests are logged at most once per kind per interval
// (`failed`): a client that sends a thousand bad frames a second, or a
// scanner trying admin tokens, costs one line a minute per kind, and the
// line that closes an interval says how many it stood for. Metrics count
// every failure (metrics.ts). Messages carry no secrets: tokens, keys and
// message contents are never passed here.
import pino from 'pino';

export type LogFields = Record<string, unknown>;

/** How bad a kind of failure is: `info` for answers that are normal now and then (a client resynchronising). */
export type FailureLevel = 'info' | 'warn' | 'error';

/** Logs at level info when called; `warn`, `error` and `failed` for the rest. */
export interface Log {
  (msg: string, fields?: LogFields): void;
  warn(msg: string, fields?: LogFields): void;
  error(msg: string, fields?: LogFields): void;
  /**
   * A failed request of `kind` (a fixed name, never client input): logged
   * unless one of that kind was in this interval; at the end of an interval
   * in which some were left out, one line says how many.
   */
  failed(kind: string, msg: string, fields?: LogFields & { level?: FailureLevel }): void;
}

export interface LogOptions {
  /** `provider` or `lmtp`: which process wrote the line. */
  name: string;
  /** Where each line goes (tests collect them); stderr by default. */
  write?: (line: string) => void;
  /** How long one line of a kind of failure stands for the others. */
  failureIntervalMs?: number;
}

export const FAILURE_INTERVAL_MS = 60_000;

export function createLog(opts: LogOptions): Log {
  const logger = pino(
    {
      name: opts.name,
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
    },
    // Synchronous: the few lines a minute this writes must not be lost when the process dies.
    opts.write ? { write: opts.write } : pino.destination({ fd: 2, sync: true }),
  );
  const interval = opts.failureIntervalMs ?? FAILURE_INTERVAL_MS;
  /** Kinds logged in the current interval, and how many of each were left out since. */
  const quiet = new Map<string, { left: number; level: FailureLevel }>();

  const endInterval = (kind: string): void => {
    const q = quiet.get(kind)!;
    if (q.left === 0) return void quiet.delete(kind);
    // This line stands for the next interval: a steady flood costs one line per interval.
    logger[q.level](
      { kind, failures: q.left, seconds: interval / 1000 },
      `${q.left} more failed requests of this kind`,
    );
    q.left = 0;
    setTimeout(endInterval, interval, kind).unref();
  };

  const log = ((msg: string, fields?: LogFields) => logger.info(fields ?? {}, msg)) as Log;
  log.warn = (msg, fields) => logger.warn(fields ?? {}, msg);
  log.error = (msg, fields) => logger.error(fields ?? {}, msg);
  log.failed = (kind, msg, { level = 'warn', ...fields } = {}) => {
    const q = quiet.get(kind);
    if (q) return void q.left++;
    logger[level]({ kind, ...fields }, msg);
    quiet.set(kind, { left: 0, level });
    setTimeout(endInterval, interval, kind).unref();
  };
  return log;
}

/**
 * Process warnings (a model file others can read, a deprecation) as lines of
 * `log` instead of Node's own text on stderr, so every line is JSON.
 */
export function logWarnings(log: Log): void {
  process.removeAllListeners('warning');
  process.on('warning', (w: Error & { code?: string }) => log.warn(w.message, { warning: w.name, code: w.code }));
}
