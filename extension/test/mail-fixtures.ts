// Builds OpenPGP mail the way real clients send it, for unit and e2e tests.
import * as openpgp from 'openpgp';

export interface Party {
  name: string;
  email: string;
  passphrase: string;
  privateArmored: string;
  publicArmored: string;
  privateKey: openpgp.PrivateKey; // decrypted
  publicKey: openpgp.PublicKey;
}

export async function makeParty(name: string, email: string, passphrase = `${name} passphrase 123`): Promise<Party> {
  const { privateKey: privateArmored, publicKey: publicArmored } = await openpgp.generateKey({
    type: 'ecc',
    userIDs: [{ name, email }],
    passphrase,
    format: 'armored',
  });
  const privateKey = await openpgp.decryptKey({
    privateKey: await openpgp.readPrivateKey({ armoredKey: privateArmored }),
    passphrase,
  });
  return { name, email, passphrase, privateArmored, publicArmored, privateKey, publicKey: privateKey.toPublic() };
}

export async function encryptText(text: string, to: Party[], signer?: Party): Promise<string> {
  return openpgp.encrypt({
    message: await openpgp.createMessage({ text }),
    encryptionKeys: to.map((p) => p.publicKey),
    signingKeys: signer?.privateKey,
  });
}

// Dated now, as a mailer dates what it signs: Thunderbird calls a signature made
// more than an hour from the Date header invalid.
function headers(from: Party, to: Party, subject: string): string {
  const date = new Date().toUTCString().replace('GMT', '+0000');
  return `From: ${from.name} <${from.email}>\r\nTo: ${to.name} <${to.email}>\r\nSubject: ${subject}\r\nDate: ${date}\r\nMIME-Version: 1.0\r\n`;
}

/** RFC 3156 PGP/MIME: the encrypted part is a full MIME entity with protected headers. */
export async function pgpMimeMessage(
  from: Party,
  to: Party,
  subject: string,
  body: string,
  sign = true,
): Promise<string> {
  const inner =
    `Content-Type: multipart/mixed; boundary="inner"\r\nSubject: ${subject}\r\n\r\n` +
    `--inner\r\nContent-Type: text/plain; charset=utf-8\r\n\r\n${body}\r\n` +
    `--inner\r\nContent-Type: application/pdf\r\nContent-Disposition: attachment; filename="report.pdf"\r\nContent-Transfer-Encoding: base64\r\n\r\nJVBERi0xLjQK\r\n` +
    `--inner--\r\n`;
  const armored = await encryptText(inner, [to], sign ? from : undefined);
  return (
    headers(from, to, '...') +
    `Content-Type: multipart/encrypted; protocol="application/pgp-encrypted"; boundary="outer"\r\n\r\n` +
    `--outer\r\nContent-Type: application/pgp-encrypted\r\n\r\nVersion: 1\r\n\r\n` +
    `--outer\r\nContent-Type: application/octet-stream; name="encrypted.asc"\r\n\r\n${armored}\r\n--outer--\r\n`
  );
}

/** Inline PGP: the armored block is the text/plain body. */
export async function inlinePgpMessage(
  from: Party,
  to: Party,
  subject: string,
  body: string,
  sign = true,
): Promise<string> {
  return (
    headers(from, to, subject) +
    `Content-Type: text/plain; charset=utf-8\r\n\r\n` +
    (await encryptText(body, [to], sign ? from : undefined))
  );
}

/**
 * A hostile sender's message: Bob's signed and encrypted block as the first part of a
 * multipart/mixed, and below it an HTML part the attacker wrote. The block is not the message.
 */
export async function partlySignedMessage(
  from: Party,
  to: Party,
  subject: string,
  signedText: string,
  attackerText: string,
): Promise<string> {
  const block = await encryptText(signedText, [to], from);
  return (
    headers(from, to, subject) +
    `Content-Type: multipart/mixed; boundary="b"\r\n\r\n` +
    `--b\r\nContent-Type: text/plain\r\n\r\n${block}\r\n` +
    `--b\r\nContent-Type: text/html\r\n\r\n<p>${attackerText}</p>\r\n--b--\r\n`
  );
}
