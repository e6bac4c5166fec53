// The demo's view of the provider's log. provider-server writes one JSON
// object per line (provider-server/src/log.ts), for journald and log
// shippers; a person running `npm run demo` reads `[provider] message`
// instead, with the level when it is not info and the fields that say more.
// Only the demo formats: the server's own output stays JSON.
import readline from 'node:readline';
import type { Readable, Writable } from 'node:stream';

/** Pino's own fields: shown another way, or of no use to a person. */
const SHOWN_OTHERWISE = new Set(['level', 'time', 'pid', 'hostname', 'name', 'msg']);

/** One log line as a person reads it; a line that is not a JSON object passes as it is. */
export function humanLine(line: string): string {
  let entry: unknown;
  try {
    entry = JSON.parse(line);
  } catch {
    return line;
  }
  if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) return line;
  const e = entry as Record<string, unknown>;
  const level = typeof e.level === 'string' && e.level !== 'info' ? `${e.level.toUpperCase()}: ` : '';
  const fields = Object.entries(e)
    .filter(([k]) => !SHOWN_OTHERWISE.has(k))
    .map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`);
  return `[${String(e.name ?? 'log')}] ${level}${String(e.msg ?? '')}${fields.length ? ` (${fields.join(', ')})` : ''}`;
}

/** Writes each line of `from` to `to` as humanLine reads it. */
export function humanLog(from: Readable, to: Writable = process.stderr): void {
  readline.createInterface({ input: from, crlfDelay: Infinity }).on('line', (l) => to.write(`${humanLine(l)}\n`));
}
