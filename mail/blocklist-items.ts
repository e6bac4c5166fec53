// What a message is looked up by in a private blocklist (docs/blocklist.md#items):
// link hosts, their registrable domains, full URLs and attachment hashes, each
// as a typed string ("host:", "domain:", "url:", "sha256:") so the kinds never
// collide. The provider normalizes its list with the same functions, so an
// item matches whatever way the mail wrote it (case, default port, fragment,
// trailing dot, Unicode host).
import type { ParsedMessage } from './mime.js';

export type ItemKind = 'host' | 'domain' | 'url' | 'sha256';

/**
 * Two-label public suffixes under which a registrable domain has three labels
 * (a small built-in part of the Public Suffix List: no PSL package is bundled;
 * docs/blocklist.md#items says what this misses).
 */
const TWO_LABEL_SUFFIXES = new Set(
  (
    'co.uk org.uk ac.uk gov.uk me.uk ltd.uk plc.uk net.uk sch.uk com.au net.au org.au edu.au gov.au ' +
    'co.nz org.nz net.nz co.jp ne.jp or.jp ac.jp go.jp co.kr or.kr com.br net.br org.br com.cn net.cn org.cn ' +
    'com.mx com.ar com.tr com.tw com.hk com.sg com.my co.in net.in org.in co.za org.za co.il ' +
    'com.ua com.pl com.ru github.io blogspot.com herokuapp.com appspot.com'
  ).split(' '),
);

const URL_IN_TEXT = /\bhttps?:\/\/[^\s<>"'`{}|\\^[\]]+/gi;
const HREF = /\bhref\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi;
const HEX64 = /^[0-9a-f]{64}$/;
const IPV4 = /^\d{1,3}(\.\d{1,3}){3}$/;

/** A URL's host, lower-case ASCII (IDNs in punycode) without a trailing dot; undefined if it is not http(s). */
export function normalizeUrl(text: string): { url: string; host: string } | undefined {
  let u: URL;
  try {
    u = new URL(text.trim());
  } catch {
    return undefined;
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.hostname === '') return undefined;
  const host = u.hostname.replace(/\.$/, '');
  const port = u.port ? `:${u.port}` : ''; // URL already drops the scheme's default port
  return { url: `${u.protocol}//${host}${port}${u.pathname}${u.search}`, host };
}

/** The domain a registrant controls: the last two labels, three under a known two-label suffix; IPs as is. */
export function registrableDomain(host: string): string {
  if (IPV4.test(host) || host.startsWith('[')) return host;
  const labels = host.split('.');
  if (labels.length <= 2) return host;
  const n = TWO_LABEL_SUFFIXES.has(labels.slice(-2).join('.')) ? 3 : 2;
  return labels.slice(-n).join('.');
}

/** One list entry's item string from its kind and value, normalized as the client writes it; undefined if invalid. */
export function itemOf(kind: ItemKind, value: string): string | undefined {
  if (kind === 'sha256') return HEX64.test(value.toLowerCase()) ? `sha256:${value.toLowerCase()}` : undefined;
  if (kind === 'url') {
    const n = normalizeUrl(value);
    return n && `url:${n.url}`;
  }
  // A host or domain is read as the host of a URL, so it is normalized the same way.
  const n = normalizeUrl(`http://${value.trim()}/`);
  if (!n) return undefined;
  return kind === 'host' ? `host:${n.host}` : `domain:${registrableDomain(n.host)}`;
}

/** Every URL written in the text body or linked from the HTML body. */
function linksOf(m: Pick<ParsedMessage, 'body' | 'html'>): string[] {
  const out = [...m.body.matchAll(URL_IN_TEXT)].map((x) => x[0].replace(/[.,;:!?)]+$/, ''));
  for (const x of m.html.matchAll(HREF)) out.push(decodeEntities(x[1] ?? x[2] ?? x[3] ?? ''));
  return out;
}

const decodeEntities = (s: string): string =>
  s
    .replace(/&amp;/g, '&')
    .replace(/&#x2f;|&#47;/gi, '/')
    .replace(/&quot;/g, '"');

/**
 * The blocklist items of a parsed message, most telling first (attachments,
 * registrable domains, hosts, then full URLs), without repeats and at most
 * `max`: a message with more links is looked up by its first `max` items.
 */
export function blocklistItems(m: Pick<ParsedMessage, 'body' | 'html' | 'attachments'>, max: number): string[] {
  const urls = linksOf(m).flatMap((l) => normalizeUrl(l) ?? []);
  const items = [
    ...m.attachments.map((a) => `sha256:${a.sha256}`),
    ...urls.map((u) => `domain:${registrableDomain(u.host)}`),
    ...urls.map((u) => `host:${u.host}`),
    ...urls.map((u) => `url:${u.url}`),
  ];
  return [...new Set(items)].slice(0, max);
}
