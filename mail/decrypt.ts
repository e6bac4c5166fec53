// OpenPGP decryption of delivered messages (openpgp@6, browser- and
// Node-safe). PGP/MIME (RFC 3156 multipart/encrypted) and inline armored
// bodies are decrypted; anything else is returned unchanged. The decrypted
// plaintext stays on the device: it only feeds the feature extractor.
import * as openpgp from 'openpgp';

const ARMOR = /-----BEGIN PGP MESSAGE-----[\s\S]*?-----END PGP MESSAGE-----/;
const HEADER_LINE = /^[\x21-\x39\x3b-\x7e]+:/;

export function isEncrypted(raw: string): boolean {
  return ARMOR.test(raw);
}

/** Outer headers worth keeping when the decrypted part carries none of its own. */
function outerHeaders(raw: string): string {
  const end = raw.search(/\r?\n\r?\n/);
  const head = end < 0 ? raw : raw.slice(0, end);
  return head
    .split(/\r?\n(?![ \t])/)
    .filter((h) => !/^(content-|mime-version)/i.test(h))
    .join('\r\n');
}

/** A decrypted payload that is a whole message: an mbox "From " line, or message headers before the first blank line. */
function isWholeMessage(text: string): boolean {
  if (text.startsWith('From ')) return true;
  const end = text.search(/\r?\n\r?\n/);
  const head = end < 0 ? '' : text.slice(0, end);
  return (
    head.split(/\r?\n/).every((l) => HEADER_LINE.test(l) || /^[ \t]/.test(l)) &&
    /^(from|subject|message-id|date):/im.test(head)
  );
}

/**
 * Decrypts an encrypted message with the user's private keys (already
 * unlocked). For PGP/MIME the decrypted MIME entity replaces the body; when
 * that entity is a whole message (protected headers), it is used as is.
 */
export async function decryptMessage(raw: string, keys: openpgp.PrivateKey[]): Promise<string> {
  const armored = raw.match(ARMOR);
  if (!armored) return raw;
  const message = await openpgp.readMessage({ armoredMessage: armored[0] });
  const { data } = await openpgp.decrypt({ message, decryptionKeys: keys, format: 'utf8' });
  const text = String(data);
  if (isWholeMessage(text)) return text;
  const isMimeEntity = HEADER_LINE.test(text.split(/\r?\n/, 1)[0]);
  return `${outerHeaders(raw)}\r\n${isMimeEntity ? '' : '\r\n'}${text}`;
}

export async function loadPrivateKey(armored: string, passphrase?: string): Promise<openpgp.PrivateKey> {
  const key = await openpgp.readPrivateKey({ armoredKey: armored });
  if (key.isDecrypted()) return key;
  if (passphrase === undefined) throw new Error('the private key is locked: give its passphrase');
  return openpgp.decryptKey({ privateKey: key, passphrase });
}
