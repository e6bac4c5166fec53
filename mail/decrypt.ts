// OpenPGP decryption (openpgp@6, browser- and Node-safe), one path for the
// client and the extension. openBlock decrypts (or verifies) one armored
// block with the user's keys and says what happened; decryptedMessage puts
// the plaintext back into its message, so that features are read from the
// same message whoever decrypted it. The plaintext stays on the device.
import * as openpgp from 'openpgp';
import { byteText, HEADER_LINE, splitHeaders } from './headers.js';
import { findPgpBlocks, type PgpBlock } from './pgp.js';
import { keyIdentity } from './signer.js';

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
  /**
   * The signing key's primary user ID among those its owner certified (mail/signer.ts), when we
   * have the key; absent when it certifies none.
   */
  signer?: string;
  /** The signing key's fingerprint (upper-case hex), when we have the key. */
  fingerprint?: string;
  /** Every address the signing key certifies, lower case: what the From header is checked against. */
  addresses?: string[];
  /** The signing key is revoked. */
  revoked?: boolean;
  /** When the signature says it was made (ISO 8601). */
  signedAt?: string;
  keyId?: string;
  /**
   * Whether the message's From address is one the signing key certifies; set by callers that
   * know the From header (extension/lib/decrypt.ts), for valid signatures.
   */
  fromMatches?: boolean;
}

export interface OpenedBlock {
  status: DecryptStatus;
  signature: SignatureInfo;
  /** Key IDs the message is encrypted to, for "not for this key". */
  recipientKeyIds?: string[];
  /** The decrypted data (a MIME entity for PGP/MIME) or the signed text; only when readable. */
  plaintext?: string;
}

/** Armored blocks above this size are refused before parsing. */
export const MAX_ARMORED_BYTES = 25 * 1024 * 1024;
const WILDCARD_KEY_ID = '0000000000000000';
const UNSIGNED: SignatureInfo = { status: 'unsigned' };
const utf8 = new TextDecoder();
/** openpgp's (unexported) VerificationResult. */
type Verification = Awaited<ReturnType<typeof openpgp.verify>>['signatures'][number];

export async function openBlock(block: PgpBlock, keys: KeyContext): Promise<OpenedBlock> {
  if (block.armored.length > MAX_ARMORED_BYTES) return { status: 'too-large', signature: UNSIGNED };
  return block.kind === 'cleartext-signed' ? verifyCleartext(block.armored, keys) : decryptEncrypted(block, keys);
}

async function decryptEncrypted(block: PgpBlock, keys: KeyContext): Promise<OpenedBlock> {
  let message: openpgp.Message<string>;
  try {
    message = await openpgp.readMessage({ armoredMessage: block.armored });
  } catch {
    return { status: 'malformed', signature: UNSIGNED };
  }
  const recipientKeyIds = message.getEncryptionKeyIDs().map((id) => id.toHex().toUpperCase());
  const anonymous = recipientKeyIds.includes(WILDCARD_KEY_ID);
  const ours = (ids: Iterable<string>) => [...ids].some((id) => anonymous || recipientKeyIds.includes(id));
  const usable = keys.unlocked.filter((k) => ours(k.getKeyIDs().map((id) => id.toHex().toUpperCase())));
  if (usable.length === 0) {
    return { status: ours(keys.lockedKeyIds) ? 'locked' : 'not-for-this-key', signature: UNSIGNED, recipientKeyIds };
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
    return { status: 'failed', signature: UNSIGNED, recipientKeyIds };
  }
  const signature = await checkSignatures(signatures, keys.verificationKeys);
  return { status: 'decrypted', signature, recipientKeyIds, plaintext: data };
}

async function verifyCleartext(armored: string, keys: KeyContext): Promise<OpenedBlock> {
  let message: openpgp.CleartextMessage;
  try {
    message = await openpgp.readCleartextMessage({ cleartextMessage: armored });
  } catch {
    return { status: 'malformed', signature: UNSIGNED };
  }
  const { signatures } = await openpgp.verify({ message, verificationKeys: keys.verificationKeys });
  const signature = await checkSignatures(signatures, keys.verificationKeys);
  return { status: 'verified-only', signature, plaintext: message.getText() };
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
  const { primary: signer, addresses, fingerprint } = await keyIdentity(signerKey);
  const revoked = await signerKey.isRevoked().catch(() => false);
  const signedAt = await sig.signature.then(
    (s) => s.packets[0]?.created?.toISOString(),
    () => undefined,
  );
  const who = { signer, fingerprint, addresses, keyId, signedAt, ...(revoked ? { revoked } : {}) };
  try {
    await sig.verified;
    // A key without a certified user names nobody: its signature vouches for no one.
    return { status: signer ? 'valid' : 'invalid', ...who };
  } catch {
    return { status: 'invalid', ...who };
  }
}

/** Outer headers worth keeping when the decrypted part carries none of its own. */
function outerHeaders(raw: string): string {
  return splitHeaders(raw)
    .head.split(/\r?\n(?![ \t])/)
    .filter((h) => !/^(content-|mime-version)/i.test(h))
    .join('\r\n');
}

/** A decrypted payload that is a whole message: an mbox "From " line, or message headers ended by a blank line. */
function isWholeMessage(text: string): boolean {
  if (text.startsWith('From ')) return true;
  const { head, separated } = splitHeaders(text);
  return separated && /^(from|subject|message-id|date):/im.test(head);
}

/**
 * The message as it reads decrypted: a payload that is a whole message
 * (protected headers) as is; otherwise the outer headers (minus Content-*)
 * with the decrypted MIME entity, or inline plaintext, as their body.
 */
export function decryptedMessage(raw: string, plaintext: string): string {
  if (isWholeMessage(plaintext)) return plaintext;
  const isMimeEntity = HEADER_LINE.test(plaintext.split(/\r?\n/, 1)[0]);
  return `${outerHeaders(raw)}\r\n${isMimeEntity ? '' : '\r\n'}${plaintext}`;
}

/**
 * The client's whole-message decryption with the user's (unlocked) private
 * keys: unencrypted mail is returned unchanged (bytes stay bytes, as training
 * reads them), mail it cannot decrypt throws.
 */
export async function decryptMessage<Raw extends string | Uint8Array>(
  raw: Raw,
  keys: openpgp.PrivateKey[],
): Promise<Raw | string> {
  const text = typeof raw === 'string' ? raw : byteText(raw);
  const block = findPgpBlocks(text).find((b) => b.kind === 'encrypted');
  if (!block) return raw;
  const opened = await openBlock(block, { unlocked: keys, lockedKeyIds: new Set(), verificationKeys: [] });
  if (opened.plaintext === undefined) throw new Error(`cannot decrypt: ${opened.status}`);
  return decryptedMessage(typeof raw === 'string' ? raw : utf8.decode(raw), opened.plaintext);
}

export async function loadPrivateKey(armored: string, passphrase?: string): Promise<openpgp.PrivateKey> {
  const key = await openpgp.readPrivateKey({ armoredKey: armored });
  if (key.isDecrypted()) return key;
  if (passphrase === undefined) throw new Error('the private key is locked: give its passphrase');
  return openpgp.decryptKey({ privateKey: key, passphrase });
}
