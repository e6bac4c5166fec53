// MIME parsing with postal-mime (runs in browsers, workers and Node): headers,
// text and HTML parts with transfer encodings and charsets decoded. A message
// the parser rejects still yields what can be read: its bytes are decoded as
// UTF-8 (lossy) and tokenized as one plain-text body.
import PostalMime, { type Address } from 'postal-mime';
import { htmlToText } from './html.js';
import type { MessageParts } from './tokenize.js';

/** Messages are cut here before parsing (bounds the parser's work). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const ADDRESS_HEADERS = ['from', 'replyTo', 'to', 'cc'] as const;
const utf8 = new TextDecoder('utf-8', { fatal: false });

/** Drops an mbox "From " envelope line and cuts oversized input. */
function normalizeRaw(raw: string | Uint8Array): string | Uint8Array {
  if (typeof raw === 'string') {
    const s = raw.length > MAX_MESSAGE_BYTES ? raw.slice(0, MAX_MESSAGE_BYTES) : raw;
    return s.startsWith('From ') ? s.slice(s.indexOf('\n') + 1 || s.length) : s;
  }
  let b = raw.length > MAX_MESSAGE_BYTES ? raw.subarray(0, MAX_MESSAGE_BYTES) : raw;
  if (b[0] === 0x46 && utf8.decode(b.subarray(0, 5)) === 'From ') {
    const nl = b.indexOf(0x0a);
    b = nl < 0 ? b.subarray(b.length) : b.subarray(nl + 1);
  }
  return b;
}

function flatten(a: Address | Address[] | undefined): { name: string; address: string }[] {
  if (!a) return [];
  const list = Array.isArray(a) ? a : [a];
  return list
    .flatMap((x) => ('group' in x && x.group ? x.group : [x]))
    .map((m) => ({
      name: m.name ?? '',
      address: 'address' in m && typeof m.address === 'string' ? m.address : '',
    }));
}

export async function parseMessage(raw: string | Uint8Array): Promise<MessageParts> {
  const input = normalizeRaw(raw);
  try {
    const email = await PostalMime.parse(input, { attachmentEncoding: 'arraybuffer' });
    const html = email.html ?? '';
    return {
      subject: email.subject ?? '',
      addresses: ADDRESS_HEADERS.flatMap((h) =>
        flatten(email[h] as Address | Address[] | undefined).map((m) => ({ header: h.toLowerCase(), ...m })),
      ),
      body: email.text && email.text.trim() !== '' ? email.text : htmlToText(html),
      html,
      mimeTypes: [...(html ? ['text/html'] : []), ...email.attachments.map((a) => a.mimeType)],
    };
  } catch {
    const body = typeof input === 'string' ? input : utf8.decode(input);
    return { subject: '', addresses: [], body, html: '', mimeTypes: [] };
  }
}
