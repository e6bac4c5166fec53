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
import { fromAddresses, fromMatchesSigner } from '../../mail/signer.js';
import { formatFingerprint } from './fingerprint.js';

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

/** from: the message's From header as the user sees it; a valid signature is checked against it. */
export async function decryptBlock(block: PgpBlock, keys: KeyContext, from?: string): Promise<DecryptResult> {
  return (await decryptBlockWithPlaintext(block, keys, from)).result;
}

/**
 * decryptBlock plus what was decrypted, for mail/decrypt.ts decryptedMessage
 * (features are read from the whole message). The plaintext is kept out of
 * DecryptResult because the badge part of that result goes to webmail pages.
 */
export async function decryptBlockWithPlaintext(
  block: PgpBlock,
  keys: KeyContext,
  from?: string,
): Promise<{ result: DecryptResult; plaintext?: string }> {
  const { plaintext, ...opened } = await openBlock(block, keys);
  const sig = opened.signature;
  if (from !== undefined && sig.status === 'valid')
    opened.signature = { ...sig, fromMatches: fromMatchesSigner(from, sig.addresses ?? []) };
  const result = { ...opened, summary: describe(opened, from) };
  if (plaintext === undefined) return { result };
  if (opened.status !== 'decrypted' || !block.pgpMime) return { result: { ...result, text: plaintext }, plaintext };
  // The decrypted body of a PGP/MIME message is itself a MIME entity.
  const entity = await parseMessage(plaintext);
  return {
    result: { ...result, text: entity.body, subject: entity.subject || undefined, attachments: entity.attachments },
    plaintext,
  };
}

function describe({ status, signature, recipientKeyIds }: OpenedBlock, from?: string): string {
  switch (status) {
    case 'decrypted':
      return signed('Decrypted', signature, from);
    case 'verified-only':
      return signed('Not encrypted', signature, from);
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

const when = (iso?: string) =>
  iso ? ` on ${new Intl.DateTimeFormat('en', { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso))}` : '';
const keyText = (fp?: string) => (fp ? `key ${formatFingerprint(fp)}` : '');

function signed(prefix: string, sig: SignatureInfo, from?: string): string {
  const by = `${sig.signer}${when(sig.signedAt)}`;
  switch (sig.status) {
    case 'valid':
      if (sig.fromMatches === false)
        return (
          `${prefix}; the sender may be forged: signed by ${by}, but the message says it is from ` +
          `${fromAddresses(from ?? '').join(', ') || 'nobody'}, an address this key does not belong to (${keyText(sig.fingerprint)}).`
        );
      return `${prefix}; signed by ${by} (signature verified; ${keyText(sig.fingerprint)}).`;
    case 'invalid':
      if (sig.revoked)
        return `${prefix}; signed with a revoked key (${sig.signer ?? sig.keyId}): its owner withdrew it, do not trust this signature.`;
      if (!sig.signer)
        return `${prefix}; SIGNATURE NOT TRUSTED: key ${sig.keyId} names no owner it has confirmed itself.`;
      return `${prefix}; SIGNATURE VERIFICATION FAILED for ${sig.signer}: the content may have been altered.`;
    case 'unknown-signer':
      return `${prefix}; signed by unknown key ${sig.keyId} (import the sender's public key to verify).`;
    default:
      return `${prefix}; not signed.`;
  }
}
