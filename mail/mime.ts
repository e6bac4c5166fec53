// MIME parsing with postal-mime (runs in browsers, workers and Node): headers,
// text and HTML parts with transfer encodings and charsets decoded. A message
// the parser rejects still yields what can be read: its bytes are decoded as
// UTF-8 (lossy) and read as one plain-text body.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import PostalMime, { type Address } from 'postal-mime';
import { labelCharset } from './charset.js';
import { byteText, missingSeparator } from './headers.js';
import { htmlToText } from './html.js';

/** What the feature extractor reads from one message. */
export interface MessageParts {
  subject: string;
  /** Display names and addresses per address header ("from", "to", ...). */
  addresses: { header: string; name: string; address: string }[];
  /** The text part, and the HTML part as text when there is none or most of its words are not in it (bodyOf). */
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
/** Characters of a body that are compared and read (models/features reads no more). */
export const MAX_TEXT_CHARS = 1 << 20;
/** HTML converted to text: a bound on the converter's work that keeps far more text than is read. */
const HTML_CHARS = 4 * MAX_TEXT_CHARS;
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
  if (!gap) return labelCharset(b);
  const newline = new TextEncoder().encode(gap.newline);
  const out = new Uint8Array(b.length + newline.length);
  out.set(b.subarray(0, gap.at));
  out.set(newline, gap.at);
  out.set(b.subarray(gap.at), gap.at + newline.length);
  return labelCharset(out);
}

/** Distinct words (lower-cased runs of letters and digits) in the first MAX_TEXT_CHARS of a text. */
function wordSet(text: string): Set<string> {
  const out = new Set<string>();
  for (const m of text
    .slice(0, MAX_TEXT_CHARS)
    .toLowerCase()
    .matchAll(/[\p{L}\p{N}]+/gu))
    out.add(m[0]);
  return out;
}

/**
 * The body to read: the text part, followed by the HTML part's text when most
 * of the HTML's words are not in the text part. A multipart/alternative whose
 * text part is a stub ("This message is in HTML format") or says something
 * else would otherwise hide every word of its HTML; in an ordinary one both
 * parts say the same, and the text part alone is read (so its features do
 * not change).
 */
function bodyOf(text: string, html: string): string {
  if (html === '') return text;
  const htmlText = htmlToText(html.slice(0, HTML_CHARS));
  if (text.trim() === '') return htmlText;
  const inText = wordSet(text);
  const htmlWords = wordSet(htmlText);
  let missing = 0;
  for (const w of htmlWords) if (!inText.has(w)) missing++;
  return 2 * missing > htmlWords.size ? `${text}\n\n${htmlText}` : text;
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
      body: bodyOf(email.text ?? '', html),
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
