// Reads the messages the CLI classifies: JSON-lines ({"id"?, "raw"|"text",
// "label"?} per line, gzip allowed), an mbox file, or a Maildir (cur/ and new/)
// or plain folder of message files. Node only (the extension gets messages
// from the mail client instead).
import fs from 'node:fs';
import path from 'node:path';
import { maildirFiles, readMaybeGzip, splitMbox } from '../models/data/loaders.js';

export interface MailItem {
  /** The id the provider delivered the message under (see messageIdOf). */
  id: string;
  raw: string;
  /** True label when the input carries one (JSON-lines "label"). */
  label?: string;
}

export type MailboxFormat = 'jsonl' | 'mbox' | 'maildir';

/**
 * The delivered-message id: the Message-ID header (without angle brackets) if
 * present, else `fallback`. The provider registers deliveries under the same id.
 */
export function messageIdOf(raw: string, fallback: string): string {
  const end = raw.search(/\r?\n\r?\n/);
  const head = (end < 0 ? raw : raw.slice(0, end)).replace(/\r?\n[ \t]+/g, ' ');
  const m = head.match(/^Message-ID:[ \t]*<?([^>\r\n]{1,250})>?/im);
  return m ? m[1].trim() : fallback;
}

export function detectFormat(p: string): MailboxFormat {
  if (fs.statSync(p).isDirectory()) return 'maildir';
  return /\.jsonl?(\.gz)?$/i.test(p) ? 'jsonl' : 'mbox';
}

const readText = (file: string): string => readMaybeGzip(file).toString('utf8');

export function readMailbox(p: string, format: MailboxFormat = detectFormat(p)): MailItem[] {
  if (format === 'jsonl') {
    return readText(p)
      .split('\n')
      .map((line, i) => ({ line: line.trim(), n: i + 1 }))
      .filter((x) => x.line !== '')
      .map(({ line, n }) => {
        let rec: Record<string, unknown>;
        try {
          rec = JSON.parse(line);
        } catch {
          throw new Error(`${p}:${n}: not valid JSON`);
        }
        const raw = typeof rec.raw === 'string' ? rec.raw : typeof rec.text === 'string' ? rec.text : undefined;
        if (raw === undefined) throw new Error(`${p}:${n}: needs a "raw" or "text" string`);
        const id = typeof rec.id === 'string' && rec.id ? rec.id : messageIdOf(raw, `${path.basename(p)}:${n}`);
        return { id, raw, label: typeof rec.label === 'string' ? rec.label : undefined };
      });
  }
  if (format === 'mbox') {
    return splitMbox(readText(p)).map((raw, i) => ({ id: messageIdOf(raw, `${path.basename(p)}#${i + 1}`), raw }));
  }
  return maildirFiles(p).map((file) => {
    const raw = fs.readFileSync(file, 'utf8');
    return { id: messageIdOf(raw, path.basename(file).replace(/:2,.*$/, '')), raw };
  });
}
