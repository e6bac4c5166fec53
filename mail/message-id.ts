// The id a delivered message is known by, the same on the provider (which
// registers deliveries) and on the client (which asks for verdicts). The
// provider's LMTP stage assigns one at delivery and writes it as the first
// header, outside the encrypted part; a sender's copy of that header is
// removed there, so the id is the provider's choice and a sender reusing an
// earlier message's Message-ID cannot make new mail "already classified".
import { splitHeaders } from './headers.js';

/** The header the provider's LMTP stage writes its assigned id into. */
export const PROVIDER_ID_HEADER = 'X-PMF-Message-Id';

/** What an assigned id may look like: the stage writes `pmf-` and 32 hex digits. */
export const PROVIDER_ID = /^pmf-[0-9a-f]{32}$/;

/** The first value of header `name` in the header block (folded lines unfolded), if any. */
function firstHeader(raw: string, name: string): string | undefined {
  const head = splitHeaders(raw).head.replace(/\r?\n[ \t]+/g, ' ');
  return head.match(new RegExp(`^${name}:[ \\t]*([^\\r\\n]*)`, 'im'))?.[1];
}

/**
 * Only the provider-assigned id (`X-PMF-Message-Id`, first occurrence), if
 * well-formed: a client asking about mail it cannot tell the provider
 * delivered (another account's, a hand-registered message) asks nothing.
 */
export function providerIdOf(raw: string): string | undefined {
  const assigned = firstHeader(raw, PROVIDER_ID_HEADER)?.trim();
  return assigned !== undefined && PROVIDER_ID.test(assigned) ? assigned : undefined;
}

/**
 * The provider-assigned id (`X-PMF-Message-Id`, first occurrence: the stage
 * puts its own on top) if well-formed, else the Message-ID header (without
 * angle brackets) for mail registered by hand (`provider-server deliver`),
 * else `fallback`.
 */
export function messageIdOf(raw: string, fallback: string): string {
  const assigned = providerIdOf(raw);
  if (assigned) return assigned;
  const m = firstHeader(raw, 'Message-ID')?.match(/^<?([^>\r\n]{1,250})>?/);
  return m ? m[1].trim() : fallback;
}
