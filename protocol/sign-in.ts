// Getting connected from a mail address alone (docs/connecting.md), shared by
// provider-server (serves the document, answers sign-ins) and the clients
// (read both strictly: every byte comes from a server they have not trusted yet).
//
// 1. Discovery: the mail domain publishes DISCOVERY_PATH, naming its
//    provider, as Thunderbird's autoconfig names the IMAP server.
// 2. Sign-in: the client posts the address and the mail password to the
//    provider's SIGN_IN_PATH; the provider checks them with the mail server's
//    own authentication and answers a bearer token with its expiry.

export const DISCOVERY_PATH = '/.well-known/pmf-provider.json';
export const DISCOVERY_FORMAT = 'pmf-provider/1';
export const SIGN_IN_PATH = '/signin';
/** The whole discovery document; a client reads no more. */
export const MAX_DISCOVERY_BYTES = 4096;
/** A sign-in request's body; the provider reads no more. */
export const MAX_SIGN_IN_BYTES = 2048;
/** A sign-in answer; a client reads no more. */
export const MAX_SIGN_IN_ANSWER_BYTES = 1024;
export const MAX_PASSWORD_CHARS = 1024;
const MAX_DOMAINS = 100;

export interface DiscoveryDocument {
  format: typeof DISCOVERY_FORMAT;
  /** The provider's origin: https, or http on a loopback host only. */
  provider: string;
  /** The mail domains whose addresses sign in there. */
  domains: string[];
  /** How to sign in: "password" (the mail account's password, checked by the mail server). */
  signIn: ['password'];
}

export interface SignInRequest {
  address: string;
  password: string;
}

export interface SignInAnswer {
  token: string;
  /** When the token expires unless used (ms since the epoch); each use pushes it back. */
  expiresAt: number;
}

const LOCAL_PART = /^[A-Za-z0-9._+-]{1,64}$/;
const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;
const IPV4 = /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/;

/** Hosts plain http:// may reach: tokens and passwords travel in the clear otherwise. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '[::1]' || (IPV4.test(host) && host.startsWith('127.'));
}

/** A domain name (lowercase, at least two labels, or "localhost") or an IPv4 loopback literal. */
function validDomain(d: string): boolean {
  if (d.length > 253) return false;
  if (d === 'localhost' || (IPV4.test(d) && d.startsWith('127.'))) return true;
  const labels = d.split('.');
  return labels.length >= 2 && labels.every((l) => LABEL.test(l)) && !/^\d+$/.test(labels.at(-1)!);
}

/**
 * The lowercase domain of a mail address, or an Error in plain words. Only
 * plain dot-atom local parts (letters, digits, . _ + -) are accepted: what
 * store user names allow, and what people type.
 */
export function mailDomain(address: string): string {
  const at = address.lastIndexOf('@');
  const local = address.slice(0, at);
  const domain = address.slice(at + 1).toLowerCase();
  if (at <= 0 || address.length > 254 || !LOCAL_PART.test(local) || !validDomain(domain))
    throw new Error('Enter your mail address, like name@example.org.');
  return domain;
}

/** Where a mail domain's discovery document lives: https, or http for a loopback domain. */
export function discoveryUrl(domain: string): string {
  return `${isLoopbackHost(domain) ? 'http' : 'https'}://${domain}${DISCOVERY_PATH}`;
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function exactKeys(o: Record<string, unknown>, keys: string[]): boolean {
  const own = Object.keys(o);
  return own.length === keys.length && keys.every((k) => own.includes(k));
}

/** "scheme://host[:port]" exactly, https or loopback http; undefined otherwise. */
export function providerOrigin(s: unknown): string | undefined {
  if (typeof s !== 'string' || s.length > 300) return undefined;
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return undefined;
  }
  if (s !== u.origin) return undefined; // no path, query, credentials or odd spelling
  if (u.protocol === 'https:' || (u.protocol === 'http:' && isLoopbackHost(u.hostname))) return u.origin;
  return undefined;
}

/**
 * A discovery document as published for `domain`, checked field by field; an
 * Error saying what is wrong otherwise. Unknown fields are refused too: a
 * later format is a new `format` string.
 */
export function parseDiscovery(json: unknown, domain: string): DiscoveryDocument {
  const bad = (why: string) => new Error(`the provider document of ${domain} is not valid: ${why}`);
  if (!isObject(json) || !exactKeys(json, ['format', 'provider', 'domains', 'signIn'])) throw bad('unexpected fields');
  if (json.format !== DISCOVERY_FORMAT) throw bad(`format must be ${DISCOVERY_FORMAT}`);
  const provider = providerOrigin(json.provider);
  if (!provider) throw bad('provider must be an https:// origin');
  const { domains, signIn } = json;
  if (
    !Array.isArray(domains) ||
    domains.length < 1 ||
    domains.length > MAX_DOMAINS ||
    !domains.every((d) => typeof d === 'string' && validDomain(d))
  )
    throw bad('domains must list mail domains');
  if (!domains.includes(domain)) throw bad(`it does not list ${domain}`);
  if (!Array.isArray(signIn) || signIn.length !== 1 || signIn[0] !== 'password')
    throw bad('signIn must be ["password"]');
  return { format: DISCOVERY_FORMAT, provider, domains: domains as string[], signIn: ['password'] };
}

/** The body of a sign-in request, or undefined when it is not exactly {address, password} within bounds. */
export function parseSignInRequest(json: unknown): SignInRequest | undefined {
  if (!isObject(json) || !exactKeys(json, ['address', 'password'])) return undefined;
  const { address, password } = json;
  if (typeof address !== 'string' || typeof password !== 'string') return undefined;
  if (password.length < 1 || password.length > MAX_PASSWORD_CHARS || password.includes('\0')) return undefined;
  try {
    mailDomain(address);
  } catch {
    return undefined;
  }
  return { address, password };
}

/** A provider's sign-in answer, checked; an Error otherwise. */
export function parseSignInAnswer(json: unknown): SignInAnswer {
  if (
    !isObject(json) ||
    !exactKeys(json, ['token', 'expiresAt']) ||
    typeof json.token !== 'string' ||
    !/^pmf_[A-Za-z0-9_-]{43}$/.test(json.token) ||
    !Number.isSafeInteger(json.expiresAt)
  )
    throw new Error('the provider’s sign-in answer is not valid');
  return { token: json.token, expiresAt: json.expiresAt as number };
}
