// The connection to a provider and the account it names: the provider origin
// plus a hash of the token, so another user's keys or verdicts are never
// mixed in (private/store.ts keys its records by it).
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';

export interface ProviderConfig {
  /** http(s) base URL of the provider, e.g. https://mail.example.org */
  url: string;
  token: string;
  /** The token came from signing in with the mail password (sign-in.ts): Disconnect revokes it. */
  signedIn?: true;
}

export function accountOf(p: ProviderConfig): string {
  return `${new URL(p.url).origin}|${bytesToHex(sha256(new TextEncoder().encode(p.token))).slice(0, 32)}`;
}
