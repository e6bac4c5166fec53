// The one mailbox reader, for every path that turns files into messages: the
// headless client (what it classifies), the provider's `deliver` (what it
// registers) and training/evaluation (through the same readers below), so a
// message gets the same bytes and the same id everywhere. Formats: JSON-lines
// ({"id"?, "raw"|"text", "label"?} per line), an mbox file, a Maildir (cur/
// and new/) or plain folder of message files, or one message file; gzip is
// allowed for JSON-lines and mbox. Node only.
import fs from 'node:fs';
import path from 'node:path';
import { byteText } from '../../mail/headers.js';
import { messageIdOf } from '../../mail/message-id.js';
import { jsonlMessages, maildirFiles, mboxMessages, readMaybeGzip, readMessageFile } from './loaders.js';

export interface MailItem {
  /** The id the provider delivered the message under (see messageIdOf). */
  id: string;
  /** JSON-lines text, or the bytes of an mbox or Maildir message (as training reads them). */
  raw: string | Uint8Array;
  /** True label when the input carries one (JSON-lines "label"). */
  label?: string;
}

export type MailboxFormat = 'jsonl' | 'mbox' | 'maildir' | 'file';

/** A folder is a Maildir, *.jsonl is JSON-lines, a file starting with "From " is an mbox, else one message. */
export function detectFormat(p: string): MailboxFormat {
  if (fs.statSync(p).isDirectory()) return 'maildir';
  if (/\.jsonl?(\.gz)?$/i.test(p)) return 'jsonl';
  return readMaybeGzip(p).subarray(0, 5).toString('latin1') === 'From ' ? 'mbox' : 'file';
}

export function readMailbox(p: string, format: MailboxFormat = detectFormat(p)): MailItem[] {
  const name = path.basename(p);
  if (format === 'jsonl') {
    return [...jsonlMessages(p)].map(({ raw, id, label, line }) => ({
      id: id ?? messageIdOf(raw, `${name}:${line}`),
      raw,
      label,
    }));
  }
  if (format === 'mbox') {
    return mboxMessages(p).map((raw, i) => ({ id: messageIdOf(byteText(raw), `${name}#${i + 1}`), raw }));
  }
  const files = format === 'file' ? [p] : maildirFiles(p);
  return files.map((file) => {
    const raw = readMessageFile(file);
    return { id: messageIdOf(byteText(raw), path.basename(file).replace(/:2,.*$/, '')), raw };
  });
}
