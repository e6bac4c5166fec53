// Errors shown to users in plain words. Our own errors (plain Error, KeyError,
// RpcError) already speak to users; anything else (a TypeError from bundled,
// minified code, a DOMException…) becomes a sentence, with the technical text
// kept as a detail the UI puts behind a disclosure.

export interface PlainError {
  message: string;
  /** Technical text for a bug report; never shown by default. */
  detail?: string;
}

/** Known technical failures and what they mean for the user. */
const KNOWN: [RegExp, string][] = [
  [
    /is not a function|is undefined|Cannot read properties of undefined/,
    'This version of Thunderbird or the browser lacks a feature the add-on needs. Update them and the add-on.',
  ],
  [/NetworkError|Failed to fetch|Load failed/, 'The server could not be reached. Check your connection and try again.'],
  [/QuotaExceeded/, 'Storage is full. Free some space and try again.'],
];
const UNKNOWN = 'Something went wrong inside the add-on. Try again; if it keeps happening, report the details below.';

export function toPlain(e: unknown): PlainError {
  const err = e instanceof Error ? e : undefined;
  const ours = err && (Object.getPrototypeOf(err) === Error.prototype || ['KeyError', 'RpcError'].includes(err.name));
  if (err && ours) return { message: err.message, detail: (err as { detail?: string }).detail };
  const detail = err ? `${err.name}: ${err.message}` : String(e);
  return { message: KNOWN.find(([re]) => re.test(detail))?.[1] ?? UNKNOWN, detail };
}
