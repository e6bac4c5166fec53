// Where a message's header block ends and its body starts, read the way mail
// parsers read it: the body starts after the first blank line, or at the
// first line that is neither a header ("Name: value") nor a header
// continuation (leading space or tab), whichever comes first. So
// "Subject: hi\nbody" has a body, and text with no headers at all is all
// body. A leading mbox "From " envelope line belongs to the header block.
// Such a block is a header block only if one of its fields is a message
// field (MESSAGE_FIELD: RFC 5322, MIME, trace, list and news fields, any
// X- field): plain text whose first line merely looks like one ("Note: buy
// cheap...") is all body, not a header named "Note".

const bytewise = new TextDecoder('latin1');

/** Bytes as text, one character per byte: enough to find headers and armor (ASCII); offsets stay byte offsets. */
export function byteText(bytes: Uint8Array): string {
  return bytewise.decode(bytes);
}

/** A header field line: printable ASCII name without spaces, then ':' (RFC 5322 §2.2). */
export const HEADER_LINE = /^[\x21-\x39\x3b-\x7e]+:/;

/** Field names that make a block of "Name: value" lines a message's header block. */
const MESSAGE_FIELD =
  /^(?:x-[^:]*|from|sender|reply-to|to|cc|bcc|subject|date|message-id|in-reply-to|references|comments|keywords|return-path|received|delivered-to|envelope-to|mime-version|content-[^:]*|resent-[^:]*|list-[^:]*|dkim-signature|domainkey-signature|arc-[^:]*|authentication-results|received-spf|precedence|priority|importance|user-agent|organization|thread-[^:]*|newsgroups|path|lines|nntp-posting-host|xref|followup-to|errors-to|disposition-notification-to|autocrypt|openpgp|mail-followup-to|mail-reply-to):/i;

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
  let message = false;
  const split = (headEnd: number, bodyStart: number, separated: boolean): HeaderSplit =>
    message || headEnd === 0
      ? { head: text.slice(0, headEnd).replace(/\r?\n$/, ''), bodyStart, separated }
      : { head: '', bodyStart: 0, separated: false };
  while (pos < text.length) {
    const nl = text.indexOf('\n', pos);
    const end = nl < 0 ? text.length : nl + 1;
    const line = text.slice(pos, nl < 0 ? end : nl).replace(/\r$/, '');
    if (line === '') return split(pos, end, true);
    const envelope = first && line.startsWith('From ');
    const isHeader = HEADER_LINE.test(line) || (!first && /^[ \t]/.test(line)) || envelope;
    if (!isHeader) return split(pos, pos, false);
    message ||= envelope || MESSAGE_FIELD.test(line);
    first = false;
    pos = end;
  }
  return split(text.length, text.length, false);
}

/** Where a blank line must go so that MIME parsers see the body: its offset and line ending; undefined if none is missing. */
export function missingSeparator(text: string): { at: number; newline: string } | undefined {
  const { bodyStart, separated } = splitHeaders(text);
  if (separated || bodyStart === text.length) return undefined;
  return { at: bodyStart, newline: text.slice(0, bodyStart).endsWith('\r\n') ? '\r\n' : '\n' };
}

/** One header of a raw message (unfolded, trimmed), or undefined: e.g. its Date, where a page shows it reformatted. */
export function headerValue(raw: string, name: string): string | undefined {
  const head = splitHeaders(raw).head.replace(/\r?\n[ \t]+/g, ' ');
  const line = head.split(/\r?\n/).find((l) => l.slice(0, name.length + 1).toLowerCase() === `${name.toLowerCase()}:`);
  return line?.slice(name.length + 1).trim();
}
