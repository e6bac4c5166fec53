// Finds OpenPGP content in a message or in what a mail view shows: the
// armored block of an inline-PGP body or of a PGP/MIME multipart/encrypted
// message (RFC 3156), or a cleartext-signed block.

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
