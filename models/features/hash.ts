// Feature hashing: token -> row in 1..N with a fixed public hash, so the
// client needs no vocabulary (a vocabulary would reveal the provider's
// feature set and would be large). SHA-256 from @noble/hashes; the domain
// prefix keeps these hashes unrelated to any other SHA-256 use.
import { sha256 } from '@noble/hashes/sha2.js';

const DOMAIN = 'pmf-feature-hash-v1\0';
const encoder = new TextEncoder();

/** Row in 1..N: 1 + (first 4 bytes of SHA-256(domain ‖ token), big-endian) mod N. */
export function tokenRow(token: string, N: number): number {
  const d = sha256(encoder.encode(DOMAIN + token));
  const h = ((d[0] << 24) | (d[1] << 16) | (d[2] << 8) | d[3]) >>> 0;
  return 1 + (h % N);
}
