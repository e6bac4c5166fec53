// The messages `deliver` registers: a message file, an mbox (*.mbox) or
// JSON-lines (*.jsonl, {"id"?, "raw"|"text"} per line, the headless client's
// input format); the last two may be gzip-compressed (*.gz). Ids are those the
// client asks about: a record's id, else the Message-ID (messageIdOf).
import fs from 'node:fs';
import path from 'node:path';
// eslint-disable-next-line boundaries/no-area-import -- until messageIdOf moves to the shared mail/ module
import { messageIdOf } from '../../client/mailbox.js';
import { numberedJsonLines, readMaybeGzip, splitMbox } from '../../models/data/loaders.js';

export interface Delivery {
  id: string;
  raw: string;
}

export function readDeliveries(file: string): Delivery[] {
  const name = path.basename(file);
  if (/\.jsonl(\.gz)?$/i.test(name)) {
    // Fallback ids name the line, as the client's mailbox reader does.
    return [...numberedJsonLines(file)].map(([r, line]) => {
      const raw = typeof r.raw === 'string' ? r.raw : r.text;
      if (typeof raw !== 'string') throw new Error(`${file}:${line}: needs a "raw" or "text" string`);
      return { id: typeof r.id === 'string' && r.id ? r.id : messageIdOf(raw, `${name}:${line}`), raw };
    });
  }
  if (/\.mbox(\.gz)?$/i.test(name)) {
    const text = readMaybeGzip(file).toString('utf8');
    return splitMbox(text).map((raw, i) => ({ id: messageIdOf(raw, `${name}#${i + 1}`), raw }));
  }
  const raw = fs.readFileSync(file, 'utf8');
  return [{ id: messageIdOf(raw, name), raw }];
}
