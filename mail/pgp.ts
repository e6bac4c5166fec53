// Finds OpenPGP content in a message or in what a mail view shows: the
// armored block of an inline-PGP body or of a PGP/MIME multipart/encrypted
// message (RFC 3156), or a cleartext-signed block; and whether a block is the
// whole message or only part of it.
import { splitHeaders } from './headers.js';

export type PgpBlockKind = 'encrypted' | 'cleartext-signed';

export interface PgpBlock {
  kind: PgpBlockKind;
  armored: string;
  /** True when the block is the body of a PGP/MIME multipart/encrypted message. */
  pgpMime: boolean;
}

const ENCRYPTED = /-----BEGIN PGP MESSAGE-----[\s\S]*?-----END PGP MESSAGE-----/g;
const SIGNED =
  /-----BEGIN PGP SIGNED MESSAGE-----[\s\S]*?-----BEGIN PGP SIGNATURE-----[\s\S]*?-----END PGP SIGNATURE-----/g;

/** True when the message carries an encrypted armored block. */
export function isEncrypted(text: string): boolean {
  return findPgpBlocks(text).some((b) => b.kind === 'encrypted');
}

/** RFC 3156 §4: multipart/encrypted with protocol application/pgp-encrypted. */
export function isPgpMime(text: string): boolean {
  return /content-type:\s*multipart\/encrypted[^]*?application\/pgp-encrypted/i.test(text);
}

/** contentType: the message's MIME type when the page shows it apart from the text. */
export function findPgpBlocks(text: string, contentType?: string): PgpBlock[] {
  const pgpMime = contentType ? isPgpMime(`Content-Type: ${contentType}`) : isPgpMime(text);
  const blocks: PgpBlock[] = [];
  for (const m of text.matchAll(ENCRYPTED)) blocks.push({ kind: 'encrypted', armored: m[0], pgpMime });
  for (const m of text.matchAll(SIGNED)) blocks.push({ kind: 'cleartext-signed', armored: m[0], pgpMime: false });
  return blocks;
}

/**
 * Whether an armored block found in a raw message is all the reader is shown: the message's root
 * is PGP/MIME (multipart/encrypted, RFC 3156 §4), or it is a single-part text message whose
 * whole body is the block (inline PGP). Otherwise the message has parts the block does not
 * cover (a sender may put unsigned text above or below Bob's signed block), and a verdict on the
 * block must not be read as one on the message.
 */
export function coversWholeMessage(raw: string, block: PgpBlock): boolean {
  const { head, bodyStart } = splitHeaders(raw);
  const contentType = /^content-type:[ \t]*([^;\r\n]*)/im
    .exec(head.replace(/\r?\n[ \t]+/g, ' '))?.[1]
    .trim()
    .toLowerCase();
  if (contentType === 'multipart/encrypted') return block.pgpMime && isPgpMime(head);
  if (contentType !== undefined && contentType !== 'text/plain') return false;
  const encoding = /^content-transfer-encoding:[ \t]*(\S+)/im.exec(head)?.[1].toLowerCase();
  if (encoding && !['7bit', '8bit'].includes(encoding)) return false;
  return raw.slice(bodyStart).trim() === block.armored.trim();
}
