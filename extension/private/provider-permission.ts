// Which host permission connecting to a provider needs. The manifests grant
// loopback only (the demo); any other provider's origin is an optional host
// permission (`optional_host_permissions: ["https://*/*"]`) asked for at
// connect time, from the options page's Connect click: browsers allow
// permissions.request only while handling the user's gesture, so the page
// computes it synchronously here, before anything is awaited.
import { t } from '../lib/i18n.js';
import { mailDomain } from '../../protocol/sign-in.js';

/** Hosts the manifests' host_permissions already cover (any port). */
const IN_MANIFEST = new Set(['localhost', '127.0.0.1']);

/**
 * The provider's origin from the address the user typed, or an error in
 * plain words: what is wrong with it and what an address looks like.
 */
export function providerAddress(typed: string): string {
  const text = typed.trim();
  if (!text) throw new Error(t('err_provider_address_missing'));
  let u: URL | undefined;
  try {
    u = new URL(text);
  } catch {
    u = undefined;
  }
  if (!u || (u.protocol !== 'https:' && u.protocol !== 'http:') || !u.hostname)
    throw new Error(t('err_provider_address_invalid', text.slice(0, 80)));
  if (u.protocol === 'http:' && !IN_MANIFEST.has(u.hostname))
    throw new Error(t('err_provider_needs_https', u.hostname));
  return u.origin;
}

/**
 * The origins to request for provider address `url`, or undefined when none
 * is needed (loopback, granted by the manifest) or the address is not one
 * the extension would connect to (the background says why). The pattern
 * names the host without its port: match patterns cover every port, and
 * Firefox refuses patterns that carry one.
 */
export function providerPermission(url: string): { origins: string[] } | undefined {
  let u: URL;
  try {
    u = new URL(url.trim());
  } catch {
    return undefined;
  }
  if (IN_MANIFEST.has(u.hostname) || u.protocol !== 'https:') return undefined;
  return { origins: [`https://${u.hostname}/*`] };
}

/** The host permissions a sign-in for `address` needs, asked on the click: the mail domain and its subdomains, and `provider` when known. */
export function signInPermission(address: string, provider?: string): { origins: string[] } | undefined {
  let domain: string;
  try {
    domain = mailDomain(address.trim());
  } catch {
    return undefined;
  }
  // A loopback domain needs none (the manifest grants it); a provider is often on a subdomain (pmf.example.org).
  const origins = [
    ...(providerPermission(`https://${domain}`) ? [`https://${domain}/*`, `https://*.${domain}/*`] : []),
    ...(provider ? (providerPermission(provider)?.origins ?? []) : []),
  ];
  return origins.length ? { origins } : undefined;
}

/** What the page says when the user (or the browser) refused it. */
export function permissionRefused(url: string): string {
  const host = new URL(url.trim()).hostname;
  return t('err_provider_permission_refused', host);
}

/**
 * The provider one-click connect from a webmail page connects to: the page's
 * own origin when the webmail is the provider's (the demo webmail), or else
 * exactly the origin the webmail's server named with the token (Roundcube's
 * plugin), never a path or anything else, and loopback only from a loopback page.
 */
export function oneClickProvider(named: unknown, pageUrl: string): string {
  if (named === undefined) return new URL(pageUrl).origin;
  let u: URL | undefined;
  try {
    u = typeof named === 'string' && named.length <= 2048 ? new URL(named) : undefined;
  } catch {
    u = undefined;
  }
  // Only "scheme://host[:port]" itself (URL would also read "https://a@b", paths or odd spellings).
  if (!u || !/^https?:$/.test(u.protocol) || (named !== u.origin && named !== `${u.origin}/`))
    throw new Error(t('err_webmail_provider_invalid'));
  // A webmail out on the network has no business naming a port on this computer.
  if (IN_MANIFEST.has(u.hostname) && !IN_MANIFEST.has(new URL(pageUrl).hostname))
    throw new Error(t('err_webmail_provider_local'));
  return u.origin;
}

/**
 * Why one-click connect refuses a provider the browser has not allowed yet:
 * a content script cannot ask, so the user connects once on the options page,
 * where the browser asks them about that host.
 */
export function oneClickNeedsPermission(url: string): string {
  return t('err_one_click_needs_permission', new URL(url).host);
}
