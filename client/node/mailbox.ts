// Reads the messages the CLI classifies: JSON-lines ({"id"?, "raw"|"text",
// "label"?} per line, gzip allowed), an mbox file, or a Maildir (cur/ and new/)
// or plain folder of message files, with the readers training and evaluation
// use. Node only (the extension gets messages from the mail client instead).
import fs from 'node:fs';
import path from 'node:path';
import { byteText } from '../../mail/headers.js';
import { messageIdOf } from '../../mail/message-id.js';
import { jsonlMessages, maildirFiles, mboxMessages, readMessageFile } from '../../models/data/loaders.js';

export interface MailItem {
  /** The id the provider delivered the message under (see messageIdOf). */
  id: string;
  /** JSON-lines text, or the bytes of an mbox or Maildir message (as training reads them). */
  raw: string | Uint8Array;
  /** True label when the input carries one (JSON-lines "label"). */
  label?: string;
}

export type MailboxFormat = 'jsonl' | 'mbox' | 'maildir';

export function detectFormat(p: string): MailboxFormat {
  if (fs.statSync(p).isDirectory()) return 'maildir';
  return /\.jsonl?(\.gz)?$/i.test(p) ? 'jsonl' : 'mbox';
}

export function readMailbox(p: string, format: MailboxFormat = detectFormat(p)): MailItem[] {
  if (format === 'jsonl') {
    return [...jsonlMessages(p)].map(({ raw, id, label, line }) => ({
      id: id ?? messageIdOf(raw, `${path.basename(p)}:${line}`),
      raw,
      label,
    }));
  }
  if (format === 'mbox') {
    return mboxMessages(p).map((raw, i) => ({ id: messageIdOf(byteText(raw), `${path.basename(p)}#${i + 1}`), raw }));
  }
  return maildirFiles(p).map((file) => {
    const raw = readMessageFile(file);
    return { id: messageIdOf(byteText(raw), path.basename(file).replace(/:2,.*$/, '')), raw };
  });
}
