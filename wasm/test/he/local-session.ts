// Both ends' keys for one user in one process, as a hello would give them:
// for benches, tests and local checks, never for a real session.
import type { ClientKeySwitchKey, ClientPublicKey, He, ProviderKey, UserKeyId } from '../../ts/he.js';

/** Both ends' keys for one user in one process (benches, tests, local checks). */
export interface LocalSession {
  pk: ClientPublicKey;
  ksk: ClientKeySwitchKey;
  /** The provider's key for this user: it decrypts what the client extracts. */
  user: ProviderKey;
  dispose(): void;
}

/** What a hello gives a client (fresh nonce, p0, the user's KSK), without a network. */
export function localSession(
  he: He,
  sk: ProviderKey,
  providerSeed: Uint8Array,
  T: number,
  id: UserKeyId = { salt: he.randomSeed(), epoch: 1 },
): LocalSession {
  const nonce = he.randomSeed();
  const pk = he.loadPublicKey(sk.publicKeyFor(providerSeed, nonce), providerSeed, nonce);
  const user = sk.userKey(providerSeed, id);
  const ksk = he.loadKeySwitchKey(sk.keySwitchKey(providerSeed, user, id, T));
  return {
    pk,
    ksk,
    user,
    dispose() {
      pk.dispose();
      ksk.dispose();
      user.dispose();
    },
  };
}
