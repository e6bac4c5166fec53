// Labelled mail straight from a provider's own mail store (Node only):
//   --mailstore DIR   Dovecot Maildir (Maildir++ `.Junk` or LAYOUT=fs `Junk/`
//                     folders) or mbox folders, one user's or a tree of many users'
//   --pmf-store FILE  provider-server's SQLite store (<dataDir>/store.db): the
//                     messages it registered, in the folder the demo webmail's
//                     users (and the extension) moved them to
// A message in a Junk folder is spam, one in any other folder ham, except
// Trash, Drafts and Sent (deleted mail of either kind, unsent and outgoing
// mail). Dovecot keywords override the folder: `$NotJunk`/`NonJunk` (a
// user's "Not spam") make it ham, `$Junk`/`Junk` spam. OpenPGP-encrypted mail
// is skipped: the provider cannot read it, and its armor would only teach the
// model what ciphertext looks like. Copies of one message (a mailing list, a
// campaign sent to many users) count once, labelled by majority (a tie is
// ham). The split is by time: the newest --test-fraction is held out, as a
// model trained today is used on tomorrow's mail.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { byteText, splitHeaders } from '../../mail/headers.js';
import { findPgpBlocks } from '../../mail/pgp.js';
import { mboxMessages, readMessageFile, type Example } from './loaders.js';

export interface StoredMail {
  id: string;
  label: 'spam' | 'ham';
  raw: Uint8Array;
  /** Delivery time, epoch ms (Maildir file name, mbox From line, Date header, or the store's). */
  time: number;
}

export interface MailStoreSummary {
  read: number;
  encrypted: number;
  duplicates: number;
  skippedFolders: string[];
}

const JUNK = /^(?:junk|spam|junk e-?mail|bulk mail)$/i;
const SKIPPED = /^(?:trash|deleted(?: items| messages)?|drafts?|sent(?: items| mail| messages)?|outbox)$/i;
const NOT_JUNK_KEYWORD = /^(?:\$notjunk|nonjunk|notjunk)$/i;
const JUNK_KEYWORD = /^(?:\$junk|junk)$/i;
/** How deep a tree of users' mail is searched for mailboxes. */
const MAX_DEPTH = 8;

/** The folder's own name: the last component, without Maildir++'s leading dot and hierarchy. */
function folderName(rel: string): string {
  const last = rel.split(path.sep).pop() ?? '';
  return last.startsWith('.') ? (last.split('.').pop() ?? '') : last || 'INBOX';
}

function dateOf(raw: Uint8Array): number {
  const head = splitHeaders(byteText(raw.subarray(0, 64 * 1024))).head;
  const m = /^date:[ \t]*([^\r\n]*)/im.exec(head);
  const t = m ? Date.parse(m[1]) : NaN;
  return Number.isFinite(t) ? t : 0;
}

/** Dovecot's keyword letters of a Maildir folder: a..z index the names in its dovecot-keywords file. */
function keywordNames(dir: string): string[] {
  const file = path.join(dir, 'dovecot-keywords');
  const names: string[] = [];
  if (!fs.existsSync(file)) return names;
  for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
    const m = /^(\d+) (.+)$/.exec(line.trim());
    if (m && Number(m[1]) < 26) names[Number(m[1])] = m[2];
  }
  return names;
}

function labelOf(folder: string, keywords: string[]): 'spam' | 'ham' {
  if (keywords.some((k) => NOT_JUNK_KEYWORD.test(k))) return 'ham';
  if (keywords.some((k) => JUNK_KEYWORD.test(k))) return 'spam';
  return JUNK.test(folder) ? 'spam' : 'ham';
}

function* maildirMail(dir: string, rel: string): Generator<StoredMail> {
  const folder = folderName(rel);
  const names = keywordNames(dir);
  for (const sub of ['cur', 'new']) {
    const d = path.join(dir, sub);
    if (!fs.existsSync(d)) continue;
    for (const file of fs.readdirSync(d).sort()) {
      if (file.startsWith('.')) continue;
      const flags = /:2,([A-Za-z]*)$/.exec(file)?.[1] ?? '';
      const keywords = [...flags].filter((c) => c >= 'a' && c <= 'z').map((c) => names[c.charCodeAt(0) - 97] ?? '');
      const raw = readMessageFile(path.join(d, file));
      const stamp = Number(/^(\d{9,})\./.exec(file)?.[1]);
      const time = Number.isFinite(stamp) ? stamp * 1000 : dateOf(raw);
      yield { id: path.join(rel, sub, file), label: labelOf(folder, keywords), raw, time };
    }
  }
}

function* mboxMail(file: string, rel: string): Generator<StoredMail> {
  const label = labelOf(folderName(rel), []);
  for (const [i, raw] of mboxMessages(file).entries()) yield { id: `${rel}#${i + 1}`, label, raw, time: dateOf(raw) };
}

const isMaildir = (dir: string) => ['cur', 'new'].some((s) => fs.existsSync(path.join(dir, s)));
const isMbox = (file: string) => {
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(5);
    return fs.readSync(fd, head, 0, 5, 0) === 5 && head.toString('latin1') === 'From ';
  } finally {
    fs.closeSync(fd);
  }
};

/** Every mailbox under root (Maildir folders and mbox files), with its path relative to root. */
function* mailboxes(
  root: string,
  rel = '',
  depth = 0,
): Generator<{ kind: 'maildir' | 'mbox'; at: string; rel: string }> {
  const at = path.join(root, rel);
  if (isMaildir(at)) yield { kind: 'maildir', at, rel };
  if (depth >= MAX_DEPTH) return;
  for (const e of fs.readdirSync(at, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const child = path.join(rel, e.name);
    if (e.isDirectory() && !['cur', 'new', 'tmp'].includes(e.name)) yield* mailboxes(root, child, depth + 1);
    else if (e.isFile() && !e.name.startsWith('dovecot') && isMbox(path.join(root, child)))
      yield { kind: 'mbox', at: path.join(root, child), rel: child };
  }
}

/** The mail of a Dovecot store (Maildir or mbox folders, one user or many), labelled by folder and keywords. */
export function* mailStoreMail(root: string, skipped: Set<string> = new Set()): Generator<StoredMail> {
  for (const box of mailboxes(root)) {
    if (SKIPPED.test(folderName(box.rel))) {
      skipped.add(box.rel || 'INBOX');
      continue;
    }
    yield* box.kind === 'maildir' ? maildirMail(box.at, box.rel) : mboxMail(box.at, box.rel);
  }
}

/** The messages provider-server registered, labelled by their webmail folder (inbox or junk). */
export function* providerStoreMail(file: string): Generator<StoredMail> {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    const rows = db
      .prepare(
        'SELECT u.name AS user, m.message_id AS id, m.raw AS raw, m.folder AS folder, m.delivered_at AS time FROM messages m JOIN users u ON u.id = m.user_id ORDER BY m.delivered_at',
      )
      .iterate() as Iterable<{ user: string; id: string; raw: Buffer; folder: string; time: number }>;
    for (const r of rows)
      yield {
        id: `${r.user}/${r.id}`,
        label: r.folder === 'junk' ? 'spam' : 'ham',
        raw: new Uint8Array(r.raw),
        time: r.time,
      };
  } finally {
    db.close();
  }
}

/** What makes two copies one message: its subject and body, whatever the line ends (trace headers differ per recipient). */
function contentKey(raw: Uint8Array): string {
  const text = byteText(raw);
  const { head, bodyStart } = splitHeaders(text);
  const subject = /^subject:[ \t]*([^\r\n]*)/im.exec(head)?.[1] ?? '';
  const body = text.slice(bodyStart).replace(/\r\n/g, '\n').trimEnd();
  return createHash('sha256').update(`${subject}\0${body}`, 'latin1').digest('hex');
}

/**
 * Deduplicated, readable examples with a time split: the newest
 * `testFraction` of the messages (by delivery time) are held out.
 */
export function storeExamples(mail: Iterable<StoredMail>, testFraction: number, summary: MailStoreSummary): Example[] {
  const byKey = new Map<string, { first: StoredMail; spam: number; ham: number }>();
  for (const m of mail) {
    summary.read++;
    if (findPgpBlocks(byteText(m.raw)).some((b) => b.kind === 'encrypted')) {
      summary.encrypted++;
      continue;
    }
    const key = contentKey(m.raw);
    const seen = byKey.get(key);
    if (seen) summary.duplicates++;
    const entry = seen ?? { first: m, spam: 0, ham: 0 };
    entry[m.label]++;
    byKey.set(key, entry);
  }
  const kept = [...byKey.values()].sort((a, b) => a.first.time - b.first.time || (a.first.id < b.first.id ? -1 : 1));
  const firstTest = kept.length - Math.round(kept.length * testFraction);
  return kept.map(({ first, spam, ham }, i) => ({
    id: first.id,
    label: spam > ham ? 'spam' : 'ham',
    raw: first.raw,
    split: i >= firstTest ? 'test' : 'train',
  }));
}
