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
import { t } from './i18n.js';

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
      return signed(t('decrypt_decrypted'), signature, from);
    case 'verified-only':
      return signed(t('decrypt_not_encrypted'), signature, from);
    case 'locked':
      return t('decrypt_locked');
    case 'not-for-this-key':
      return t('decrypt_not_for_you', recipientKeyIds?.join(', ') || t('decrypt_none'));
    case 'malformed':
      return t('decrypt_malformed');
    case 'too-large':
      return t('decrypt_too_large', MAX_ARMORED_BYTES >> 20);
    case 'failed':
      return t('decrypt_failed');
  }
}

const when = (signer: string, iso?: string) =>
  iso
    ? t(
        'decrypt_signer_on',
        signer,
        new Intl.DateTimeFormat(t('lang'), { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso)),
      )
    : signer;
const keyText = (fp?: string) => (fp ? t('decrypt_key', formatFingerprint(fp)) : '');

function signed(status: string, sig: SignatureInfo, from?: string): string {
  const by = when(String(sig.signer), sig.signedAt);
  switch (sig.status) {
    case 'valid':
      if (sig.fromMatches === false)
        return t(
          'decrypt_sig_forged',
          status,
          by,
          fromAddresses(from ?? '').join(', ') || t('decrypt_nobody'),
          keyText(sig.fingerprint),
        );
      return t('decrypt_sig_valid', status, by, keyText(sig.fingerprint));
    case 'invalid':
      if (sig.revoked) return t('decrypt_sig_revoked', status, String(sig.signer ?? sig.keyId));
      if (!sig.signer) return t('decrypt_sig_no_owner', status, String(sig.keyId));
      return t('decrypt_sig_bad', status, sig.signer);
    case 'unknown-signer':
      return t('decrypt_sig_unknown', status, String(sig.keyId));
    default:
      return t('decrypt_unsigned', status);
  }
}
