// Who a key says its owner is, counting only what the owner certified: a
// user ID without a valid self-certification can be appended to a public key
// by anyone who handles it (a keyserver, a forwarded attachment), so it names
// nobody. Shared by the key store (what the key list shows) and signature
// checks (whom a badge names), so both agree.
import { addressParser } from 'postal-mime';
import type * as openpgp from 'openpgp';
import { headerValue } from './headers.js';

export interface KeyIdentity {
  /** The primary user ID among the certified ones (OpenPGP.js getPrimaryUser), e.g. "Bob <bob@example.org>". */
  primary?: string;
  /** Every certified user ID, primary first. */
  userIds: string[];
  /** The addresses of the certified user IDs, lower case. */
  addresses: string[];
  /** Upper-case hex. */
  fingerprint: string;
}

/** The key's certified identity at `date` (default now): revoked or unsigned user IDs are left out. */
export async function keyIdentity(key: openpgp.Key, date = new Date()): Promise<KeyIdentity> {
  const certified: openpgp.UserIDPacket[] = [];
  for (const user of key.users) {
    if (!user.userID) continue;
    try {
      await user.verify(date);
      certified.push(user.userID);
    } catch {
      // No valid self-certification (unsigned, forged or revoked): not the owner's claim.
    }
  }
  let primary: string | undefined;
  try {
    primary = (await key.getPrimaryUser(date)).user.userID?.userID;
  } catch {
    // No certified user at all: the key names nobody.
  }
  const userIds = [...new Set(certified.map((u) => u.userID))].sort((a, b) => +(b === primary) - +(a === primary));
  const addresses = [...new Set(certified.map((u) => u.email.toLowerCase()).filter(Boolean))];
  return { primary, userIds, addresses, fingerprint: key.getFingerprint().toUpperCase() };
}

/**
 * The From header of a raw message (unfolded), or undefined. A webmail may show only the
 * sender's name; the raw message has the address the signer is checked against.
 */
export function fromHeader(raw: string): string | undefined {
  return headerValue(raw, 'from');
}

/** The addresses of a From header, lower case ("Name <a@b>", a bare address, or several). */
export function fromAddresses(from: string): string[] {
  return addressParser(from, { flatten: true }).flatMap((a) => (a.address ? [a.address.toLowerCase()] : []));
}

/**
 * Whether the From header names exactly one address and the signer certified it. Several
 * addresses, or none, do not match: the badge must not vouch for a sender the key never named.
 */
export function fromMatchesSigner(from: string, addresses: string[]): boolean {
  const named = fromAddresses(from);
  return named.length === 1 && addresses.includes(named[0]);
}
