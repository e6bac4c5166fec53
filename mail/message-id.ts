// The id a delivered message is known by, the same on the provider (which
// registers deliveries) and on the client (which asks for verdicts).
import { splitHeaders } from './headers.js';

/**
 * The Message-ID header (without angle brackets) if present, else `fallback`.
 */
export function messageIdOf(raw: string, fallback: string): string {
  const head = splitHeaders(raw).head.replace(/\r?\n[ \t]+/g, ' ');
  const m = head.match(/^Message-ID:[ \t]*<?([^>\r\n]{1,250})>?/im);
  return m ? m[1].trim() : fallback;
}
