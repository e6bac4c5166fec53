// The client side of connecting from a mail address (docs/connecting.md):
// find the provider from the mail domain, sign in with the mail password,
// keep the token alive, give it up. Every answer is read up to a bound and
// checked field by field (protocol/sign-in.ts); redirects are refused, so a
// document or token comes from exactly the origin asked.
import {
  discoveryUrl,
  mailDomain,
  MAX_DISCOVERY_BYTES,
  MAX_SIGN_IN_ANSWER_BYTES,
  parseDiscovery,
  parseSignInAnswer,
  SIGN_IN_PATH,
  type DiscoveryDocument,
  type SignInAnswer,
} from './sign-in.js';

type Fetch = typeof fetch;

/** Why connecting failed, in words for the user; `detail` is for the disclosure. */
export class SignInError extends Error {
  constructor(
    message: string,
    readonly detail: string,
    /** When the provider says to try again (ms since the epoch), for a lockout. */
    readonly retryAt?: number,
  ) {
    super(message);
  }
}

/** A JSON body of at most `maxBytes`: a server cannot make this device buffer more. */
export async function boundedJson(r: Response, maxBytes: number): Promise<unknown> {
  const reader = r.body?.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (let part = await reader?.read(); part && !part.done; part = await reader!.read()) {
    size += part.value.length;
    if (size > maxBytes) {
      await reader!.cancel();
      throw new Error(`the answer from ${new URL(r.url || 'about:blank').origin} is larger than ${maxBytes} bytes`);
    }
    chunks.push(part.value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) all.set(c, (at += c.length) - c.length);
  return JSON.parse(new TextDecoder().decode(all));
}

/** The provider a mail address's domain names, checked (https, lists the domain, nothing else). */
export async function discoverProvider(address: string, f: Fetch = fetch): Promise<DiscoveryDocument> {
  const domain = mailDomain(address);
  const url = discoveryUrl(domain);
  let r: Response;
  try {
    r = await f(url, { redirect: 'error', credentials: 'omit' });
  } catch (e) {
    throw new SignInError(
      `Could not find the private spam check for ${domain}. Check the address, or ask your mail provider whether it offers one.`,
      `${url}: ${(e as Error).message}`,
    );
  }
  const nothing = () =>
    new SignInError(
      `${domain} does not offer private spam checking (or not yet). Check the address, or ask your mail provider.`,
      `${url}: HTTP ${r.status}`,
    );
  if (!r.ok) throw nothing();
  try {
    return parseDiscovery(await boundedJson(r, MAX_DISCOVERY_BYTES), domain);
  } catch (e) {
    throw new SignInError(
      `The settings ${domain} publishes for private spam checking are not valid, so nothing was sent. Tell your mail provider.`,
      `${url}: ${(e as Error).message}`,
    );
  }
}

/** Signs in at `provider` with the mail address and its password; the token and its expiry. */
export async function signIn(
  provider: string,
  address: string,
  password: string,
  f: Fetch = fetch,
): Promise<SignInAnswer> {
  const url = new URL(SIGN_IN_PATH, provider).href;
  let r: Response;
  try {
    r = await f(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ address, password }),
      redirect: 'error',
      credentials: 'omit',
    });
  } catch (e) {
    throw new SignInError(
      'Your provider could not be reached. Check your connection and try again.',
      `${url}: ${(e as Error).message}`,
    );
  }
  const detail = `${url}: HTTP ${r.status}`;
  if (r.status === 401)
    throw new SignInError('Wrong address or password: use the ones you read your mail with.', detail);
  if (r.status === 429) {
    const seconds = Number(r.headers.get('retry-after'));
    const retryAt = Date.now() + (Number.isFinite(seconds) && seconds > 0 ? Math.min(seconds, 86_400) : 60) * 1000;
    const minutes = Math.ceil((retryAt - Date.now()) / 60_000);
    throw new SignInError(
      `Too many attempts: sign-in is paused for this account. Try again in ${minutes} minute(s).`,
      detail,
      retryAt,
    );
  }
  if (r.status === 403)
    throw new SignInError('Your provider does not offer private spam checking for this address.', detail);
  if (!r.ok)
    throw new SignInError('Your provider could not sign you in right now. Try again in a few minutes.', detail);
  try {
    return parseSignInAnswer(await boundedJson(r, MAX_SIGN_IN_ANSWER_BYTES));
  } catch (e) {
    throw new SignInError(
      'Your provider’s answer was not valid, so you are not signed in.',
      `${detail}: ${(e as Error).message}`,
    );
  }
}

/** The id the provider names a token by (token-endpoint.ts): the first 16 hex digits of its SHA-256. */
export async function tokenId(token: string): Promise<string> {
  const digest = new Uint8Array(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(token)));
  return Array.from(digest.subarray(0, 8), (b) => b.toString(16).padStart(2, '0')).join('');
}

/**
 * Uses the token once (GET /tokens), which pushes its expiry back, and says
 * when it now expires; 'refused' when the provider no longer accepts it
 * (expired or revoked). Network failures throw.
 */
export async function keepTokenAlive(provider: string, token: string, f: Fetch = fetch): Promise<number | 'refused'> {
  const r = await f(new URL('/tokens', provider).href, {
    headers: { authorization: `Bearer ${token}` },
    redirect: 'error',
    credentials: 'omit',
  });
  if (r.status === 401) return 'refused';
  if (!r.ok) throw new Error(`HTTP ${r.status}`);
  const body = (await boundedJson(r, 64 * 1024)) as { tokens?: { current?: unknown; expiresAt?: unknown }[] };
  const mine = Array.isArray(body?.tokens) ? body.tokens.find((t) => t?.current === true) : undefined;
  if (!mine || !Number.isSafeInteger(mine.expiresAt)) throw new Error('the provider did not list this token');
  return mine.expiresAt as number;
}

/** Revokes the token at the provider (DELETE /tokens/<id>): true once it no longer works there. */
export async function revokeToken(provider: string, token: string, f: Fetch = fetch): Promise<boolean> {
  const r = await f(new URL(`/tokens/${await tokenId(token)}`, provider).href, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${token}` },
    redirect: 'error',
    credentials: 'omit',
  });
  return r.status === 204 || r.status === 401 || r.status === 404;
}
