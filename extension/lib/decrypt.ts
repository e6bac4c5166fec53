// Decrypts and verifies one OpenPGP block with the user's keys and says, in
// one status, what the badge should show. Pure (no browser APIs), so the same
// code runs in the background, in Thunderbird and in Node tests.
import * as openpgp from 'openpgp';
import PostalMime from 'postal-mime';
import type { PgpBlock } from './pgp-message.js';

export interface KeyContext {
  /** Private keys the user has unlocked (decrypted in memory). */
  unlocked: openpgp.PrivateKey[];
  /** Key IDs (hex, upper case) of the user's private keys that are still locked. */
  lockedKeyIds: Set<string>;
  /** Own and contacts' public keys, for signature checks. */
  verificationKeys: openpgp.PublicKey[];
}

export type DecryptStatus =
  | 'decrypted' // an encrypted block, now readable
  | 'verified-only' // a cleartext-signed block (nothing to decrypt)
  | 'locked' // addressed to one of our keys, which needs its passphrase
  | 'not-for-this-key'
  | 'malformed'
  | 'too-large'
  | 'failed';

export interface SignatureInfo {
  status: 'valid' | 'invalid' | 'unknown-signer' | 'unsigned';
  /** Primary user id of the signing key, when we have it. */
  signer?: string;
  keyId?: string;
}

export interface Attachment {
  filename: string;
  mimeType: string;
  size: number;
}

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

/** Armored blocks above this size are refused before parsing. */
export const MAX_ARMORED_BYTES = 25 * 1024 * 1024;
const WILDCARD_KEY_ID = '0000000000000000';
const UNSIGNED: SignatureInfo = { status: 'unsigned' };
/** openpgp's (unexported) VerificationResult. */
type Verification = Awaited<ReturnType<typeof openpgp.verify>>['signatures'][number];

export async function decryptBlock(block: PgpBlock, keys: KeyContext): Promise<DecryptResult> {
  if (block.armored.length > MAX_ARMORED_BYTES) {
    return {
      status: 'too-large',
      summary: `Message too large to decrypt here (over ${MAX_ARMORED_BYTES >> 20} MB).`,
      signature: UNSIGNED,
    };
  }
  return block.kind === 'cleartext-signed' ? verifyCleartext(block.armored, keys) : decryptEncrypted(block, keys);
}

async function decryptEncrypted(block: PgpBlock, keys: KeyContext): Promise<DecryptResult> {
  let message: openpgp.Message<string>;
  try {
    message = await openpgp.readMessage({ armoredMessage: block.armored });
  } catch {
    return malformed();
  }
  const recipientKeyIds = message.getEncryptionKeyIDs().map((id) => id.toHex().toUpperCase());
  const anonymous = recipientKeyIds.includes(WILDCARD_KEY_ID);
  const ours = (ids: Iterable<string>) => [...ids].some((id) => anonymous || recipientKeyIds.includes(id));
  const usable = keys.unlocked.filter((k) => ours(k.getKeyIDs().map((id) => id.toHex().toUpperCase())));
  if (usable.length === 0) {
    if (ours(keys.lockedKeyIds)) {
      return {
        status: 'locked',
        summary: 'Encrypted to your key: unlock it with your passphrase to read.',
        signature: UNSIGNED,
        recipientKeyIds,
      };
    }
    return {
      status: 'not-for-this-key',
      summary: `Not encrypted to any of your keys (recipients: ${recipientKeyIds.join(', ') || 'none'}).`,
      signature: UNSIGNED,
      recipientKeyIds,
    };
  }

  let data: string;
  let signatures: Verification[];
  try {
    ({ data, signatures } = await openpgp.decrypt({
      message,
      decryptionKeys: usable,
      verificationKeys: keys.verificationKeys,
    }));
  } catch {
    // Wrong session key, corrupt packets or a failed integrity (MDC/AEAD) check:
    // all mean the content cannot be trusted, and none is shown.
    return {
      status: 'failed',
      summary: 'Decryption failed: the message is damaged or was tampered with.',
      signature: UNSIGNED,
      recipientKeyIds,
    };
  }
  const signature = await checkSignatures(signatures, keys.verificationKeys);
  const content = block.pgpMime ? await parseMimeEntity(data) : { text: data, attachments: [] as Attachment[] };
  return { status: 'decrypted', summary: describe('Decrypted', signature), signature, recipientKeyIds, ...content };
}

async function verifyCleartext(armored: string, keys: KeyContext): Promise<DecryptResult> {
  let message: openpgp.CleartextMessage;
  try {
    message = await openpgp.readCleartextMessage({ cleartextMessage: armored });
  } catch {
    return malformed();
  }
  const { signatures } = await openpgp.verify({ message, verificationKeys: keys.verificationKeys });
  const signature = await checkSignatures(signatures, keys.verificationKeys);
  return { status: 'verified-only', summary: describe('Not encrypted', signature), signature, text: message.getText() };
}

async function checkSignatures(
  signatures: Verification[],
  verificationKeys: openpgp.PublicKey[],
): Promise<SignatureInfo> {
  if (signatures.length === 0) return UNSIGNED;
  // Report the first signature; mail carries one in practice.
  const sig = signatures[0];
  const keyId = sig.keyID.toHex().toUpperCase();
  const signerKey = verificationKeys.find((k) => k.getKeyIDs().some((id) => id.toHex().toUpperCase() === keyId));
  if (!signerKey) return { status: 'unknown-signer', keyId };
  const signer = signerKey.getUserIDs()[0];
  try {
    await sig.verified;
    return { status: 'valid', signer, keyId };
  } catch {
    return { status: 'invalid', signer, keyId };
  }
}

function describe(prefix: string, sig: SignatureInfo): string {
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

function malformed(): DecryptResult {
  return {
    status: 'malformed',
    summary: 'Malformed OpenPGP armor: the message could not be read.',
    signature: UNSIGNED,
  };
}

/** The decrypted body of a PGP/MIME message is itself a MIME entity. */
async function parseMimeEntity(entity: string): Promise<{ text: string; subject?: string; attachments: Attachment[] }> {
  const mail = await PostalMime.parse(entity);
  const text = mail.text ?? (mail.html ? htmlToText(mail.html) : '');
  return {
    text,
    subject: mail.subject || undefined,
    attachments: mail.attachments.map((a) => ({
      filename: a.filename ?? 'attachment',
      mimeType: a.mimeType,
      size: typeof a.content === 'string' ? a.content.length : a.content.byteLength,
    })),
  };
}

/** Text of an HTML part, for display with textContent (never as HTML). */
export function htmlToText(html: string): string {
  return html
    .replace(/<(script|style)[\s\S]*?<\/\1>/gi, '')
    .replace(/<br\s*\/?>|<\/(p|div|li|tr|h\d)>/gi, '\n')
    .replace(/<[^>]*>/g, '')
    .replace(/&nbsp;/g, ' ')
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&amp;/g, '&')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}
