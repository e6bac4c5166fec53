// Writes the provider-assigned message id into a delivered message, as its
// first header and outside the encrypted part, after removing every copy of
// that header the sender put there: the id the at-most-once rule keys on is
// the provider's, never the sender's (mail/message-id.ts reads it back).
import { splitHeaders } from '../../../mail/headers.js';
import { PROVIDER_ID_HEADER } from '../../../mail/message-id.js';

const NAMED = new RegExp(`^${PROVIDER_ID_HEADER}[ \\t]*:`, 'i');

export class StampRefused extends Error {}

/** `raw` with the sender's `X-PMF-Message-Id` fields removed and `id` on top. */
export function stampProviderId(raw: Buffer, id: string): Buffer {
  const text = raw.toString('latin1'); // one character per byte: the body passes through unchanged
  const { bodyStart } = splitHeaders(text);
  const lines = text.slice(0, bodyStart).split(/(?<=\n)/);
  const kept: string[] = [];
  let dropping = false;
  for (const line of lines) {
    if (!/^[ \t]/.test(line)) dropping = NAMED.test(line); // a continuation belongs to the field above
    if (!dropping) kept.push(line);
  }
  // Readers that stop the header block only at a blank line could still see a
  // copy hidden after a line that is not a header: refuse instead of guessing.
  const blank = text.search(/\r?\n\r?\n/);
  const looseHead = text.slice(bodyStart, blank < 0 ? text.length : blank);
  if (looseHead.split(/\r?\n/).some((l) => NAMED.test(l))) {
    throw new StampRefused(`a ${PROVIDER_ID_HEADER} header sits where some mail readers see a header`);
  }
  const newline = /^[^\n]*\r\n/.test(text) || !text.includes('\n') ? '\r\n' : '\n';
  return Buffer.concat([
    Buffer.from(`${PROVIDER_ID_HEADER}: ${id}${newline}`, 'latin1'),
    Buffer.from(kept.join(''), 'latin1'),
    raw.subarray(bodyStart),
  ]);
}
