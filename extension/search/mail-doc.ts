// A message as the index takes it: validated, its text cut to bounds (huge
// mails are cut, not refused), its date a number.
import { MailSearchError } from './errors.js';
import type { IndexableDoc } from './lunr-shard.js';

const MAX_ID_CHARS = 1024;
const MAX_HEADER_CHARS = 2048;
/** Bodies are indexed and stored up to this many characters (huge mails are cut, not refused). */
export const MAX_BODY_CHARS = 200_000;

/** A decrypted message, as handed over by the extension after decryption. */
export interface MailDoc {
  id: string;
  from: string;
  to?: string;
  subject: string;
  /** Milliseconds since the epoch, or any string Date.parse understands. */
  date: string | number;
  body: string;
  /** Where the message can be opened (e.g. the webmail's message URL). */
  url?: string;
}

/** A validated message, as stored (encrypted) and indexed. */
export interface StoredDoc {
  id: string;
  from: string;
  to?: string;
  subject: string;
  date: number;
  body: string;
  url?: string;
}

function text(d: Record<string, unknown>, field: string, i: number, max: number, optional = false): string | undefined {
  const v = d[field];
  if (v === undefined && optional) return undefined;
  if (typeof v !== 'string') throw new MailSearchError('bad-input', `Message ${i}: "${field}" must be a string`);
  return v.length > max ? v.slice(0, max) : v;
}

export function validateDoc(raw: unknown, i: number): StoredDoc {
  if (typeof raw !== 'object' || raw === null) throw new MailSearchError('bad-input', `Message ${i} is not an object`);
  const d = raw as Record<string, unknown>;
  if (typeof d.id !== 'string' || d.id.length === 0 || d.id.length > MAX_ID_CHARS) {
    throw new MailSearchError(
      'bad-input',
      `Message ${i}: "id" must be a non-empty string of at most ${MAX_ID_CHARS} characters`,
    );
  }
  const date = typeof d.date === 'number' ? d.date : typeof d.date === 'string' ? Date.parse(d.date) : NaN;
  if (!Number.isFinite(date)) throw new MailSearchError('bad-input', `Message ${i}: "date" is not a valid date`);
  const doc: StoredDoc = {
    id: d.id,
    from: text(d, 'from', i, MAX_HEADER_CHARS)!,
    subject: text(d, 'subject', i, MAX_HEADER_CHARS)!,
    date,
    body: text(d, 'body', i, MAX_BODY_CHARS)!,
  };
  const to = text(d, 'to', i, MAX_HEADER_CHARS, true);
  const url = text(d, 'url', i, MAX_HEADER_CHARS, true);
  if (to !== undefined) doc.to = to;
  if (url !== undefined) doc.url = url;
  return doc;
}

/** Validates every message before anything is written; the last version of a repeated id wins. */
export function validateDocs(docs: readonly MailDoc[]): StoredDoc[] {
  const byId = new Map<string, StoredDoc>();
  docs.forEach((d, i) => {
    const v = validateDoc(d, i);
    byId.delete(v.id);
    byId.set(v.id, v);
  });
  return [...byId.values()];
}

export const indexable = (d: StoredDoc, seq: number): IndexableDoc => ({ ...d, seq });

export const docChars = (d: StoredDoc): number =>
  d.id.length + d.from.length + d.subject.length + d.body.length + (d.to?.length ?? 0) + (d.url?.length ?? 0);
