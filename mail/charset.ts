// Unlabeled 8-bit text: a one-part message (or plain text) whose bytes are
// not UTF-8 and whose Content-Type names no charset, e.g. KOI8-R or
// windows-1251 mail from clients that never labelled it. Read as UTF-8 it
// becomes replacement characters and gives no words at all, so its charset
// is guessed by chardet (ICU's detector: the Cyrillic, Greek, Hebrew, Arabic,
// Central and Western European single-byte sets, Shift_JIS, EUC-JP/KR,
// GB18030, Big5) and written into the header block before parsing. A label
// the sender gave is never overridden, and ASCII and UTF-8 are left alone.
// Parts of a multipart message without a charset, and transfer-encoded
// (base64, quoted-printable) unlabeled text, are read as postal-mime reads
// them (UTF-8).
import { detect } from 'chardet';
import { byteText, splitHeaders } from './headers.js';

/** Bytes of the body the detector reads (its answer does not change with more). */
const SAMPLE_BYTES = 64 * 1024;

/** A header field's unfolded value, '' if absent. */
function field(head: string, name: string): string {
  const m = new RegExp(`^${name}[ \\t]*:([^\\n]*(?:\\r?\\n[ \\t][^\\n]*)*)`, 'im').exec(head);
  return m ? m[1].replace(/\r?\n[ \t]+/g, ' ').trim() : '';
}

function isUtf8(bytes: Uint8Array): boolean {
  try {
    // Streaming: a sample may end inside a character.
    new TextDecoder('utf-8', { fatal: true }).decode(bytes, { stream: true });
    return true;
  } catch {
    return false;
  }
}

/**
 * The message with `charset=<guess>` in its Content-Type when its one text
 * body is unlabeled 8-bit text that is not UTF-8; otherwise the same bytes.
 * `raw` has its header block separated by a blank line (or none at all).
 */
export function labelCharset(raw: Uint8Array): Uint8Array {
  const text = byteText(raw.subarray(0, Math.min(raw.length, 256 * 1024)));
  const { head, bodyStart, separated } = splitHeaders(text);
  if (!separated && bodyStart !== 0) return raw; // headers only: no body to read
  const type = field(head, 'content-type');
  if (type !== '' && (!/^text\//i.test(type) || /charset\s*=/i.test(type))) return raw;
  if (!/^(?:|7bit|8bit|binary)$/i.test(field(head, 'content-transfer-encoding'))) return raw;
  const sample = raw.subarray(bodyStart, bodyStart + SAMPLE_BYTES);
  if (isUtf8(sample)) return raw;
  const charset = detect(sample);
  if (!charset || /^utf-8$/i.test(charset)) return raw;
  const kept = head
    .split(/\r?\n(?![ \t])/)
    .filter((h) => h !== '' && !/^content-type[ \t]*:/i.test(h))
    .map((h) => `${h}\r\n`)
    .join('');
  const label = `Content-Type: ${type || 'text/plain'}; charset=${charset}\r\n`;
  const headBytes = Uint8Array.from(label + kept + '\r\n', (c) => c.charCodeAt(0));
  const body = raw.subarray(bodyStart);
  const out = new Uint8Array(headBytes.length + body.length);
  out.set(headBytes);
  out.set(body, headBytes.length);
  return out;
}
