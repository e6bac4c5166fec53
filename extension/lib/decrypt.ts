// What the badge shows for one OpenPGP block: mail/decrypt.ts decrypts and
// verifies it (the code the client runs too), this adds the sentence for the
// badge and the readable text. Pure (no browser APIs), so the same code runs
// in the background, in Thunderbird and in Node tests.
import {
  MAX_ARMORED_BYTES,
  openBlock,
  type DecryptStatus,
  type KeyContext,
  type OpenedBlock,
  type SignatureInfo,
} from '../../mail/decrypt.js';
import { parseMessage, type Attachment } from '../../mail/mime.js';
import type { PgpBlock } from '../../mail/pgp.js';

export interface DecryptResult {
  status: DecryptStatus;
  /** One sentence for the badge. */
  summary: string;
  signature: SignatureInfo;
  /** Decrypted text (plain text; HTML parts are reduced to text). */
  text?: string;
  /** From PGP/MIME protected headers, when present. */
  subject?: string;
  attachments?: Attachment[];
  /** Key IDs the message is encrypted to, for "not for this key". */
  recipientKeyIds?: string[];
}

export async function decryptBlock(block: PgpBlock, keys: KeyContext): Promise<DecryptResult> {
  return (await decryptBlockWithPlaintext(block, keys)).result;
}

/**
 * decryptBlock plus what was decrypted, for mail/decrypt.ts decryptedMessage
 * (features are read from the whole message). The plaintext is kept out of
 * DecryptResult because the badge part of that result goes to webmail pages.
 */
export async function decryptBlockWithPlaintext(
  block: PgpBlock,
  keys: KeyContext,
): Promise<{ result: DecryptResult; plaintext?: string }> {
  const { plaintext, ...opened } = await openBlock(block, keys);
  const result = { ...opened, summary: describe(opened) };
  if (plaintext === undefined) return { result };
  if (opened.status !== 'decrypted' || !block.pgpMime) return { result: { ...result, text: plaintext }, plaintext };
  // The decrypted body of a PGP/MIME message is itself a MIME entity.
  const entity = await parseMessage(plaintext);
  return {
    result: { ...result, text: entity.body, subject: entity.subject || undefined, attachments: entity.attachments },
    plaintext,
  };
}

function describe({ status, signature, recipientKeyIds }: OpenedBlock): string {
  switch (status) {
    case 'decrypted':
      return signed('Decrypted', signature);
    case 'verified-only':
      return signed('Not encrypted', signature);
    case 'locked':
      return 'Encrypted to your key: unlock it with your passphrase to read.';
    case 'not-for-this-key':
      return `Not encrypted to any of your keys (recipients: ${recipientKeyIds?.join(', ') || 'none'}).`;
    case 'malformed':
      return 'Malformed OpenPGP armor: the message could not be read.';
    case 'too-large':
      return `Message too large to decrypt here (over ${MAX_ARMORED_BYTES >> 20} MB).`;
    case 'failed':
      return 'Decryption failed: the message is damaged or was tampered with.';
  }
}

function signed(prefix: string, sig: SignatureInfo): string {
  switch (sig.status) {
    case 'valid':
      return `${prefix}; signed by ${sig.signer} (signature verified).`;
    case 'invalid':
      return `${prefix}; SIGNATURE VERIFICATION FAILED for ${sig.signer}: the content may have been altered.`;
    case 'unknown-signer':
      return `${prefix}; signed by unknown key ${sig.keyId} (import the sender's public key to verify).`;
    default:
      return `${prefix}; not signed.`;
  }
}
