// Thunderbird: what the message display action popup shows for the message in
// the current tab. Thunderbird's own OpenPGP (RNP) decrypts mail for keys it
// holds, and since Thunderbird 125 messages.getFull()/getRaw() hand add-ons
// the decrypted parts. We first decrypt the raw, still-encrypted message with
// the extension's own keys (which also verifies signatures against our
// contacts); if we cannot, we report and index what Thunderbird decrypted.
import type { MailSource } from '../lib/messages.js';
import { htmlToText } from '../../mail/html.js';
import type { DecryptResult } from '../lib/decrypt.js';
import { findPgpBlocks } from '../../mail/pgp.js';

/** The few Thunderbird MailExtension APIs we use (not in the polyfill types). */
interface MessageHeader {
  id: number;
  author: string;
  subject: string;
  date: Date | string;
  recipients: string[];
  headerMessageId: string;
}
interface MessagePart {
  contentType?: string;
  body?: string;
  parts?: MessagePart[];
  decryptionStatus?: 'none' | 'skipped' | 'success' | 'fail';
}
interface MessageList {
  id: string | null;
  messages: MessageHeader[];
}
interface ThunderbirdApi {
  messageDisplay: { getDisplayedMessage(tabId: number): Promise<MessageHeader | null> };
  messages: {
    getRaw(id: number, opts: { data_format: 'BinaryString'; decrypt: boolean }): Promise<string>;
    getFull(id: number, opts?: { decrypt: boolean }): Promise<MessagePart>;
    query(info: object): Promise<MessageList>;
    continueList(id: string): Promise<MessageList>;
  };
}

export interface DisplayedMessageReport {
  subject: string;
  from: string;
  /** Who decrypted: the extension (with signature check) or Thunderbird. */
  decryptedBy: 'extension' | 'thunderbird' | 'none';
  /** Thunderbird's decryptionStatus of the root part, if any. */
  thunderbirdStatus?: string;
  result?: DecryptResult;
  summary: string;
}

export interface Deps {
  decrypt(block: ReturnType<typeof findPgpBlocks>[number], source: MailSource): Promise<DecryptResult>;
  /** Indexes text Thunderbird decrypted (our own decryptions index themselves). */
  index(source: MailSource, text: string): Promise<void>;
}

function tb(): ThunderbirdApi {
  const api = (globalThis as { messenger?: ThunderbirdApi }).messenger;
  if (!api?.messageDisplay) throw new Error('This only works in Thunderbird.');
  return api;
}

export async function describeDisplayedMessage(tabId: number, deps: Deps): Promise<DisplayedMessageReport> {
  const api = tb();
  const header = await api.messageDisplay.getDisplayedMessage(tabId);
  if (!header) throw new Error('No message is displayed in this tab.');
  return readMessage(api, header, deps);
}

export interface MailboxTally {
  done: number;
  total: number;
  /** Decrypted (by us or by Thunderbird) and indexed. */
  indexed: number;
  locked: number;
  failed: number;
}

/**
 * Decrypts and indexes every OpenPGP message Thunderbird holds (all
 * folders), reporting progress after each message. Headers are listed first
 * so the progress bar knows the total.
 */
export async function indexThunderbirdMail(deps: Deps, onProgress: (t: MailboxTally) => void): Promise<MailboxTally> {
  const api = tb();
  const headers: MessageHeader[] = [];
  for (let page = await api.messages.query({}); ; page = await api.messages.continueList(page.id)) {
    headers.push(...page.messages);
    if (!page.id) break;
  }
  const tally: MailboxTally = { done: 0, total: headers.length, indexed: 0, locked: 0, failed: 0 };
  for (const header of headers) {
    try {
      const r = await readMessage(api, header, deps);
      if (r.decryptedBy !== 'none' && r.result?.status !== 'verified-only') tally.indexed++;
      else if (r.result?.status === 'locked') tally.locked++;
      else if (r.result && r.result.status !== 'not-for-this-key') tally.failed++;
    } catch {
      tally.failed++;
    }
    tally.done++;
    onProgress({ ...tally });
  }
  return tally;
}

async function readMessage(api: ThunderbirdApi, header: MessageHeader, deps: Deps): Promise<DisplayedMessageReport> {
  const source: MailSource = {
    id: `thunderbird:${header.headerMessageId}`,
    url: `mid:${header.headerMessageId}`,
    from: header.author,
    to: header.recipients.join(', '),
    subject: header.subject,
    date: new Date(header.date).toISOString(),
  };
  const base = { subject: header.subject, from: header.author };

  const raw = await api.messages.getRaw(header.id, { data_format: 'BinaryString', decrypt: false });
  const [block] = findPgpBlocks(raw);
  if (!block) return { ...base, decryptedBy: 'none', summary: 'This message is not OpenPGP-encrypted or signed.' };
  const ours = await deps.decrypt(block, source);
  if (ours.status === 'decrypted' || ours.status === 'verified-only')
    return { ...base, decryptedBy: 'extension', result: ours, summary: ours.summary };

  // Not decryptable by us (locked, other key…): see whether Thunderbird did it.
  const full = await api.messages.getFull(header.id, { decrypt: true });
  if (full.decryptionStatus === 'success') {
    await deps.index(source, partsText(full));
    return {
      ...base,
      decryptedBy: 'thunderbird',
      thunderbirdStatus: full.decryptionStatus,
      result: ours,
      summary: `Decrypted by Thunderbird's OpenPGP (its header bar shows the signature). The extension itself: ${ours.summary}`,
    };
  }
  return {
    ...base,
    decryptedBy: 'none',
    thunderbirdStatus: full.decryptionStatus,
    result: ours,
    summary: ours.summary,
  };
}

/** Plain text of a decrypted Thunderbird message, for indexing. */
function partsText(part: MessagePart): string {
  if (part.parts?.length) return part.parts.map(partsText).filter(Boolean).join('\n');
  if (part.body === undefined) return '';
  if (part.contentType?.startsWith('text/plain')) return part.body;
  if (part.contentType?.startsWith('text/html')) return htmlToText(part.body);
  return '';
}
