// Errors shown to users in plain words. Our own errors (plain Error, KeyError,
// RpcError) already speak to users; anything else (a TypeError from bundled,
// minified code, a DOMException…) becomes a sentence, with the technical text
// kept as a detail the UI puts behind a disclosure.
import { t, type MessageKey } from './i18n.js';

export interface PlainError {
  message: string;
  /** Technical text for a bug report; never shown by default. */
  detail?: string;
}

/** Known technical failures and what they mean for the user. */
const KNOWN: [RegExp, MessageKey][] = [
  [/is not a function|is undefined|Cannot read properties of undefined/, 'error_old_program'],
  [/NetworkError|Failed to fetch|Load failed/, 'error_network'],
  [/QuotaExceeded/, 'error_storage_full'],
];

export function toPlain(e: unknown): PlainError {
  const err = e instanceof Error ? e : undefined;
  const ours = err && (Object.getPrototypeOf(err) === Error.prototype || ['KeyError', 'RpcError'].includes(err.name));
  if (err && ours) return { message: err.message, detail: (err as { detail?: string }).detail };
  const detail = err ? `${err.name}: ${err.message}` : String(e);
  return { message: t(KNOWN.find(([re]) => re.test(detail))?.[1] ?? 'error_unknown'), detail };
}
