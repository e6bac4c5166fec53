// The search key, wrapped by the user's own OpenPGP keys (docs/remote-search.md#keys):
// 32 random bytes from the first device that indexes, encrypted to the
// user's keys and signed by them, stored at the provider. Another device
// with the same OpenPGP key unwraps it; a wrapped key the user's keys did not
// sign is refused, so the provider can never hand a device a key of its own
// choosing (anyone can encrypt to a public key; only the user can sign).
import * as openpgp from 'openpgp';
import { REQUEST_LIMITS } from '../../../protocol/remote-search.js';
import type { RemoteIndexApi } from './api.js';
import { SEARCH_KEY_BYTES } from './keys.js';

/** The wrapped key did not open with these keys, or none of them signed it. */
export class SearchKeyError extends Error {
  override name = 'SearchKeyError';
}

export async function wrapSearchKey(searchKey: Uint8Array, keys: openpgp.PrivateKey[]): Promise<Uint8Array> {
  if (keys.length === 0) throw new SearchKeyError('an unlocked private key is needed to wrap the search key');
  return openpgp.encrypt({
    message: await openpgp.createMessage({ binary: searchKey }),
    encryptionKeys: keys.map((k) => k.toPublic()),
    signingKeys: keys,
    format: 'binary',
  });
}

export async function unwrapSearchKey(wrapped: Uint8Array, keys: openpgp.PrivateKey[]): Promise<Uint8Array> {
  if (wrapped.length > REQUEST_LIMITS.wrappedKeyBytes) throw new SearchKeyError('the wrapped search key is too large');
  let data: Uint8Array;
  try {
    ({ data } = await openpgp.decrypt({
      message: await openpgp.readMessage({ binaryMessage: wrapped }),
      decryptionKeys: keys,
      // Only the user's own keys vouch for it: a contact's signature does not.
      verificationKeys: keys.map((k) => k.toPublic()),
      expectSigned: true,
      format: 'binary',
    }));
  } catch (e) {
    throw new SearchKeyError(
      `the search key stored at the provider does not open with your keys or is not signed by them (${(e as Error).message})`,
    );
  }
  if (data.length !== SEARCH_KEY_BYTES) throw new SearchKeyError('the stored search key has the wrong length');
  return data;
}

/**
 * The account's search key: the stored one, unwrapped; or, when there is
 * none, a fresh one stored wrapped (if another device stored one first,
 * that one).
 */
export async function obtainSearchKey(api: RemoteIndexApi, keys: openpgp.PrivateKey[]): Promise<Uint8Array> {
  const stored = await api.getKey();
  if (stored) return unwrapSearchKey(stored, keys);
  const fresh = crypto.getRandomValues(new Uint8Array(SEARCH_KEY_BYTES));
  if ((await api.putKey(await wrapSearchKey(fresh, keys))) === 'created') return fresh;
  fresh.fill(0);
  const theirs = await api.getKey();
  if (!theirs) throw new SearchKeyError('the provider refused the search key but has none');
  return unwrapSearchKey(theirs, keys);
}
