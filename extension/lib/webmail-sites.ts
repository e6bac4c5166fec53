// The webmail sites the user added (Options → Webmail sites). The content
// script runs on their pages only: it is registered for them at run time
// (scripting.registerContentScripts), not listed in the manifest, so another
// site, or another port on this computer, gets no extension UI and cannot have
// it read a message. A match pattern names a host on every port (Firefox takes
// no ports in patterns), so the content script and the background also check
// the exact origin. A site other than this computer needs the user's host
// permission for it, asked on the options page's Add click. The browser's
// storage and scripting APIs are passed in (storage.local, scripting), so this
// runs in Node tests too.
import { t } from './i18n.js';
import type { Scripting } from 'webextension-polyfill';

/** The part of browser.storage.local used here. */
export interface SitesStorage {
  get(key: string): Promise<Record<string, unknown>>;
  set(items: Record<string, unknown>): Promise<void>;
}

/** The part of browser.scripting used here. */
export type ContentScripts = Pick<
  Scripting.Static,
  'getRegisteredContentScripts' | 'registerContentScripts' | 'unregisterContentScripts'
>;

/** storage.local key: the sites' origins (not secret; the content script reads it to know where it may run). */
const KEY = 'webmailSites';
export const MAX_SITES = 20;
const SCRIPT_ID = 'pmf-webmail';
/** Hosts the manifest's host_permissions grant at install (any port). */
const LOOPBACK = new Set(['localhost', '127.0.0.1']);

/**
 * The origin of a webmail address as the user typed it: https, or plain http
 * on this computer only (a page anyone on the network can rewrite is no place
 * to show decrypted mail). Throws in plain words.
 */
export function webmailOrigin(input: string): string {
  let u: URL;
  try {
    u = new URL(input.trim());
  } catch {
    throw new Error(t('err_webmail_address_missing'));
  }
  if (u.protocol === 'https:' || (u.protocol === 'http:' && LOOPBACK.has(u.hostname))) return u.origin;
  throw new Error(t('err_webmail_needs_https'));
}

/** The match pattern for a site: its host on every port. */
export const sitePattern = (origin: string): string => {
  const u = new URL(origin);
  return `${u.protocol}//${u.hostname}/*`;
};

/** The host permission a site needs, or undefined when the manifest grants it (this computer). */
export function sitePermission(origin: string): { origins: string[] } | undefined {
  return LOOPBACK.has(new URL(origin).hostname) ? undefined : { origins: [sitePattern(origin)] };
}

export async function loadSites(storage: SitesStorage): Promise<string[]> {
  const stored = (await storage.get(KEY))[KEY];
  if (!Array.isArray(stored)) return [];
  return stored.flatMap((s: unknown) => {
    try {
      return typeof s === 'string' && webmailOrigin(s) === s ? [s] : [];
    } catch {
      return [];
    }
  });
}

/** Adds or removes one site; returns the list saved. Permission is the caller's to check first. */
export async function changeSites(storage: SitesStorage, change: { add?: string; remove?: string }): Promise<string[]> {
  let sites = await loadSites(storage);
  if (change.remove !== undefined) sites = sites.filter((s) => s !== change.remove);
  if (change.add !== undefined) {
    const origin = webmailOrigin(change.add);
    if (!sites.includes(origin)) {
      if (sites.length >= MAX_SITES) throw new Error(t('err_too_many_sites', MAX_SITES));
      sites.push(origin);
    }
  }
  await storage.set({ [KEY]: sites });
  return sites;
}

/** Whether a page's origin is one of the sites (the exact origin: scheme, host and port). */
export async function isWebmailSite(storage: SitesStorage, pageUrl: string | undefined): Promise<boolean> {
  let origin: string;
  try {
    origin = new URL(pageUrl ?? '').origin;
  } catch {
    return false;
  }
  return (await loadSites(storage)).includes(origin);
}

/** Registers the content script for exactly these sites (none: no content script at all). */
export async function registerSites(scripting: ContentScripts, sites: string[]): Promise<void> {
  const matches = [...new Set(sites.map(sitePattern))].sort();
  const [current] = await scripting.getRegisteredContentScripts({ ids: [SCRIPT_ID] });
  if (JSON.stringify([...(current?.matches ?? [])].sort()) === JSON.stringify(matches)) return;
  if (current) await scripting.unregisterContentScripts({ ids: [SCRIPT_ID] });
  if (matches.length === 0) return;
  await scripting.registerContentScripts([
    {
      id: SCRIPT_ID,
      matches,
      js: ['content.js'],
      allFrames: true,
      runAt: 'document_idle',
      persistAcrossSessions: true,
    },
  ]);
}
