// Where a message's header block ends and its body starts, read the way mail
// parsers read it: the body starts after the first blank line, or at the
// first line that is neither a header ("Name: value") nor a header
// continuation (leading space or tab), whichever comes first. So
// "Subject: hi\nbody" has a body, and text with no headers at all is all
// body. A leading mbox "From " envelope line belongs to the header block.

const bytewise = new TextDecoder('latin1');

/** Bytes as text, one character per byte: enough to find headers and armor (ASCII); offsets stay byte offsets. */
export function byteText(bytes: Uint8Array): string {
  return bytewise.decode(bytes);
}

/** A header field line: printable ASCII name without spaces, then ':' (RFC 5322 §2.2). */
export const HEADER_LINE = /^[\x21-\x39\x3b-\x7e]+:/;

export interface HeaderSplit {
  /** The header block, without the blank line that ends it. */
  head: string;
  /** Where the body starts (after the blank line, if there is one). */
  bodyStart: number;
  /** True when a blank line separates the headers from the body. */
  separated: boolean;
}

export function splitHeaders(text: string): HeaderSplit {
  let pos = 0;
  let first = true;
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos);
    const end = nl < 0 ? text.length : nl + 1;
    const line = text.slice(pos, nl < 0 ? end : nl).replace(/\r$/, '');
    if (line === '') return { head: text.slice(0, pos).replace(/\r?\n$/, ''), bodyStart: end, separated: true };
    const isHeader = HEADER_LINE.test(line) || (!first && /^[ \t]/.test(line)) || (first && line.startsWith('From '));
    if (!isHeader) return { head: text.slice(0, pos).replace(/\r?\n$/, ''), bodyStart: pos, separated: false };
    first = false;
    pos = end;
  }
  return { head: text.replace(/\r?\n$/, ''), bodyStart: text.length, separated: false };
}

/** Where a blank line must go so that MIME parsers see the body: its offset and line ending; undefined if none is missing. */
export function missingSeparator(text: string): { at: number; newline: string } | undefined {
  const { bodyStart, separated } = splitHeaders(text);
  if (separated || bodyStart === text.length) return undefined;
  return { at: bodyStart, newline: text.slice(0, bodyStart).endsWith('\r\n') ? '\r\n' : '\n' };
}
