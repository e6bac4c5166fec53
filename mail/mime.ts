// MIME parsing with postal-mime (runs in browsers, workers and Node): headers,
// text and HTML parts with transfer encodings and charsets decoded. A message
// the parser rejects still yields what can be read: its bytes are decoded as
// UTF-8 (lossy) and read as one plain-text body.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import PostalMime, { type Address } from 'postal-mime';
import { byteText, missingSeparator } from './headers.js';
import { htmlToText } from './html.js';

/** What the feature extractor reads from one message. */
export interface MessageParts {
  subject: string;
  /** Display names and addresses per address header ("from", "to", ...). */
  addresses: { header: string; name: string; address: string }[];
  /** Plain-text body, or the HTML body converted to text. */
  body: string;
  /** Raw HTML body (for link hosts), '' if none. */
  html: string;
  /** MIME types of attachments and non-text parts. */
  mimeTypes: string[];
}

export interface Attachment {
  filename: string;
  mimeType: string;
  size: number;
  /** Hex SHA-256 of the decoded content (a blocklist item, docs/blocklist.md). */
  sha256: string;
}

export interface ParsedMessage extends MessageParts {
  attachments: Attachment[];
}

/** Called at most once per message, for what a reader should know (e.g. an empty body). */
export type WarningSink = (warning: string) => void;

/** Messages are cut here before parsing (bounds the parser's work). */
export const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
const ADDRESS_HEADERS = ['from', 'replyTo', 'to', 'cc'] as const;
const utf8 = new TextDecoder('utf-8', { fatal: false });
const NEWLINE = 0x0a;

/** Drops an mbox "From " envelope line, cuts oversized input, and puts a blank line where the body starts. */
function normalizeRaw(raw: string | Uint8Array): string | Uint8Array {
  if (typeof raw === 'string') {
    const s = raw.length > MAX_MESSAGE_BYTES ? raw.slice(0, MAX_MESSAGE_BYTES) : raw;
    const msg = s.startsWith('From ') ? s.slice(s.indexOf('\n') + 1 || s.length) : s;
    const gap = missingSeparator(msg);
    return gap ? `${msg.slice(0, gap.at)}${gap.newline}${msg.slice(gap.at)}` : msg;
  }
  let b = raw.length > MAX_MESSAGE_BYTES ? raw.subarray(0, MAX_MESSAGE_BYTES) : raw;
  if (b[0] === 0x46 && utf8.decode(b.subarray(0, 5)) === 'From ') {
    const nl = b.indexOf(NEWLINE);
    b = nl < 0 ? b.subarray(b.length) : b.subarray(nl + 1);
  }
  const gap = missingSeparator(byteText(b));
  if (!gap) return b;
  const newline = new TextEncoder().encode(gap.newline);
  const out = new Uint8Array(b.length + newline.length);
  out.set(b.subarray(0, gap.at));
  out.set(newline, gap.at);
  out.set(b.subarray(gap.at), gap.at + newline.length);
  return out;
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

const contentBytes = (c: string | ArrayBuffer | Uint8Array): Uint8Array =>
  typeof c === 'string' ? new TextEncoder().encode(c) : c instanceof Uint8Array ? c : new Uint8Array(c);

async function parse(input: string | Uint8Array): Promise<ParsedMessage> {
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
      attachments: email.attachments.map((a) => ({
        filename: a.filename ?? 'attachment',
        mimeType: a.mimeType,
        size: typeof a.content === 'string' ? a.content.length : a.content.byteLength,
        sha256: bytesToHex(sha256(contentBytes(a.content))),
      })),
    };
  } catch {
    const body = typeof input === 'string' ? input : utf8.decode(input);
    return { subject: '', addresses: [], body, html: '', mimeTypes: [], attachments: [] };
  }
}

/** Parses an RFC 822 message (string or bytes); never throws. */
export async function parseMessage(raw: string | Uint8Array, onWarning?: WarningSink): Promise<ParsedMessage> {
  const parts = await parse(normalizeRaw(raw));
  if (parts.body.trim() === '') onWarning?.('the message has no text body (nothing but headers or attachments)');
  return parts;
}
