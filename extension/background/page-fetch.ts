// Fetches a webmail message page for the mailbox indexer. Content scripts
// cannot do it reliably: Firefox MV3 content scripts have no content.fetch,
// and their own fetch obeys the page's CSP (the demo webmail's
// `default-src 'none'` blocks it). The background may read only pages of the
// site open in the asking tab, and says in plain words why a page failed.

import { t } from '../lib/i18n.js';

/** Message pages above this size are not read (an armored block is capped at 25 MB too). */
export const MAX_PAGE_CHARS = 30 * 1024 * 1024;

function statusText(status: number): string {
  if (status === 401 || status === 403) return t('page_fetch_refused');
  if (status === 404) return t('page_fetch_gone');
  return t('page_fetch_http_error', status);
}

export async function fetchPageFor(url: string, tabUrl: string | undefined, get = fetch): Promise<string> {
  let target: URL, site: URL;
  try {
    target = new URL(url);
    site = new URL(tabUrl ?? '');
  } catch {
    throw new Error(t('page_fetch_other_site'));
  }
  if (!['http:', 'https:'].includes(target.protocol) || target.origin !== site.origin)
    throw new Error(t('page_fetch_other_site'));
  const res = await get(target.href, { credentials: 'include', cache: 'no-store' });
  // A redirect off the site (e.g. to a login server) is not the message.
  if (res.url && new URL(res.url).origin !== site.origin) throw new Error(t('page_fetch_login'));
  if (!res.ok) throw new Error(statusText(res.status));
  const text = await res.text();
  if (text.length > MAX_PAGE_CHARS) throw new Error(t('page_fetch_too_large'));
  return text;
}
