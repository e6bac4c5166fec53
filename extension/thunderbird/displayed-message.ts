// Thunderbird: what the message display action popup shows for the message in
// the current tab, and indexing of Thunderbird's mail. Two ways to decrypt:
// the extension's own keys, tried first on the raw still-encrypted message
// (this also verifies the signature against the extension's contacts), and
// Thunderbird's own OpenPGP, whose decrypted parts messages.getFull() hands
// add-ons (since Thunderbird 125): a key that lives only in Thunderbird is
// never asked for a second time.
import type { MailSource } from '../lib/messages.js';
import { htmlToText } from '../../mail/html.js';
import type { DecryptResult } from '../lib/decrypt.js';
import { coversWholeMessage, findPgpBlocks } from '../../mail/pgp.js';
import { allMessages, tb, type MessageHeader, type MessagePart, type ThunderbirdApi } from './api.js';
import type { DisplayedMessageReport } from './message-report.js';
import { showOnToolbar } from './report-view.js';
import { t } from '../lib/i18n.js';

/** Said first when the block is only part of the message: nothing vouches for the rest. */
export const PARTIAL_TEXT = t('tb_partial');

export interface Deps {
  decrypt(block: ReturnType<typeof findPgpBlocks>[number], source: MailSource): Promise<DecryptResult>;
  /** Indexes text Thunderbird decrypted, under its protected subject (our own decryptions index themselves). */
  index(source: MailSource, text: string, subject: string): Promise<void>;
  /** What the private spam check found about this message (by the provider's id in `raw`), in sentences. */
  spamLines?(raw: string, inJunk: boolean): Promise<string[] | undefined>;
}

export async function describeDisplayedMessage(tabId: number, deps: Deps): Promise<DisplayedMessageReport> {
  const api = tb();
  const [header] = (await api.messageDisplay.getDisplayedMessages(tabId)).messages;
  if (!header) throw new Error(t('tb_no_message'));
  const raw = await api.messages.getRaw(header.id, { data_format: 'BinaryString', decrypt: false });
  const read = await readMessage(api, header, deps, raw);
  const inJunk = header.folder?.specialUse?.includes('junk') === true;
  const spam = await deps.spamLines?.(raw, inJunk).catch(() => undefined);
  const attachments = read.path === 'extension' ? read.result?.attachments : undefined;
  const report: DisplayedMessageReport = {
    ...read,
    ...(read.subject !== header.subject ? { listedSubject: header.subject } : {}),
    ...(spam?.length ? { spam } : {}),
    ...(attachments?.length
      ? { attachments: attachments.map((a) => ({ name: a.filename, type: a.mimeType, size: a.size })) }
      : {}),
  };
  // The toolbar only mirrors the verdict: a failure there must not hide it from the popup or banner.
  await showOnToolbar(api, tabId, report).catch((e: unknown) => console.warn('toolbar status:', (e as Error).name));
  return report;
}

export interface MailboxTally {
  done: number;
  total: number;
  /** Decrypted (by us or by Thunderbird) and indexed. */
  indexed: number;
  locked: number;
  failed: number;
}

/** Pausing and resuming a long first indexing. */
export interface IndexControl {
  /** Checked before each message: true stops the run where it is (the tally then has done < total). */
  paused(): boolean;
  /** Whether a message is already in the index: it is counted as indexed without being read again. */
  isIndexed(id: string): Promise<boolean>;
  /** After each message: whether it waits for a locked key (it is then not indexed, and may be later). */
  onDone?(header: MessageHeader, locked: boolean): void;
}

/**
 * Decrypts and indexes messages, reporting progress after each. Without a
 * list, every message Thunderbird holds (all folders): headers are listed
 * first so the progress bar knows the total. With `control`, the run can be
 * paused, and a new run (after a pause, a crash or a restart) resumes by
 * skipping what is already indexed.
 */
export async function indexThunderbirdMail(
  deps: Deps,
  onProgress: (t: MailboxTally) => void,
  headers?: MessageHeader[],
  control?: IndexControl,
): Promise<MailboxTally> {
  const api = tb();
  headers ??= await allMessages(api, await api.messages.query({}));
  const tally: MailboxTally = { done: 0, total: headers.length, indexed: 0, locked: 0, failed: 0 };
  for (const header of headers) {
    if (control?.paused()) break;
    try {
      if (await control?.isIndexed(sourceId(header))) {
        tally.indexed++;
        tally.done++;
        control?.onDone?.(header, false);
        onProgress({ ...tally });
        continue;
      }
      const r = await readMessage(api, header, deps);
      const locked = r.result?.status === 'locked' && r.path !== 'thunderbird';
      if (r.path === 'thunderbird' || (r.path === 'extension' && r.result?.status === 'decrypted')) tally.indexed++;
      else if (locked) tally.locked++;
      else if (r.path === 'none' && r.result?.status !== 'not-for-this-key') tally.failed++;
      control?.onDone?.(header, locked);
    } catch {
      tally.failed++;
    }
    tally.done++;
    onProgress({ ...tally });
  }
  return tally;
}

/** The search index's id for a Thunderbird message (stable across folder moves). */
export const sourceId = (header: Pick<MessageHeader, 'headerMessageId'>) => `thunderbird:${header.headerMessageId}`;

async function readMessage(
  api: ThunderbirdApi,
  header: MessageHeader,
  deps: Deps,
  raw?: string,
): Promise<DisplayedMessageReport> {
  const source: MailSource = {
    id: sourceId(header),
    url: `mid:${header.headerMessageId}`,
    from: header.author,
    to: header.recipients.join(', '),
    subject: header.subject,
    date: new Date(header.date).toISOString(),
  };
  const base = { subject: header.subject, from: header.author };

  raw ??= await api.messages.getRaw(header.id, { data_format: 'BinaryString', decrypt: false });
  const blocks = findPgpBlocks(raw);
  const [block] = blocks;
  if (!block) return { ...base, path: 'plain', summary: t('tb_plain') };
  const partial = blocks.length > 1 || !coversWholeMessage(raw, block);
  const said = (summary: string) => (partial ? { partial, summary: `${PARTIAL_TEXT} ${summary}` } : { summary });
  const ours = await deps.decrypt(block, source);
  if (ours.status === 'decrypted' || ours.status === 'verified-only')
    return {
      ...base,
      subject: ours.subject ?? header.subject,
      path: 'extension',
      result: ours,
      text: ours.text,
      ...said(ours.summary),
    };

  // Not decryptable with the extension's keys (locked, or not imported): did Thunderbird decrypt it?
  const full = await api.messages.getFull(header.id, { decrypt: true });
  const text = decryptedText(full);
  if (text !== undefined) {
    const subject = protectedSubject(full) ?? header.subject;
    await deps.index(source, text, subject);
    return {
      ...base,
      subject,
      path: 'thunderbird',
      result: ours,
      text,
      // Thunderbird hands add-ons the decrypted parts but no signature status, and the signature sits inside
      // the encryption, out of our reach: say so rather than imply a check.
      ...said(
        "Decrypted by Thunderbird's own OpenPGP. Signature not checked by the add-on: Thunderbird does not tell add-ons whether this message was signed, or by whom; its own OpenPGP indicator above the message shows its verdict.",
      ),
    };
  }
  // Thunderbird said "success" and handed over nothing: a damaged message, not a decrypted one (unless the
  // add-on's key is locked: unlocked, it may read what Thunderbird could not).
  if (full.decryptionStatus === 'success' && ours.status !== 'locked')
    return { ...base, path: 'none', result: ours, damaged: true, ...said(EMPTY_TEXT) };
  return { ...base, path: 'none', result: ours, ...said(ours.summary) };
}

/** Thunderbird "decrypted" a message and there is nothing in it: it cannot be read, by anyone. */
export const EMPTY_TEXT = t('tb_damaged');

/**
 * The text Thunderbird decrypted, when it did: a "success" whose parts hold
 * no text is no decryption (Thunderbird reports one for a damaged inline
 * message), and nothing is read, shown or checked for it.
 */
export function decryptedText(full: MessagePart): string | undefined {
  if (full.decryptionStatus !== 'success') return undefined;
  const text = partsText(full);
  return text.trim() ? text : undefined;
}

/** PGP/MIME hides the real subject inside the encryption: the headers of a decrypted inner part. */
function protectedSubject(root: MessagePart): string | undefined {
  const walk = (p: MessagePart): string | undefined =>
    p.headers?.subject?.[0] ?? p.parts?.map(walk).find((s) => s !== undefined);
  return root.parts?.map(walk).find((s) => s !== undefined);
}

/** Plain text of a decrypted Thunderbird message, for indexing and the popup. */
export function partsText(part: MessagePart): string {
  const parts = part.parts ?? [];
  // An alternative's plain-text version says it all; the HTML one would repeat it.
  const plain = parts.find((p) => p.contentType?.startsWith('text/plain'));
  if (part.contentType?.startsWith('multipart/alternative') && plain) return partsText(plain);
  if (parts.length) return parts.map(partsText).filter(Boolean).join('\n');
  if (part.body === undefined) return '';
  if (part.contentType?.startsWith('text/plain')) return part.body;
  if (part.contentType?.startsWith('text/html')) return htmlToText(part.body);
  return '';
}
