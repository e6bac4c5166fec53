// Tells the content scripts of open webmail tabs something (keys changed,
// the spam check is ready). Only tabs of the webmail sites the user added,
// where the content script runs: others cannot receive (Thunderbird has
// none, and logs an error for every message sent to a tab that cannot receive).
import browser from 'webextension-polyfill';
import { loadSites, sitePattern } from './webmail-sites.js';

export async function tellWebmailTabs(msg: object): Promise<void> {
  const url = (await loadSites(browser.storage.local)).map(sitePattern);
  if (url.length === 0) return;
  for (const tab of await browser.tabs.query({ url })) {
    if (tab.id !== undefined) browser.tabs.sendMessage(tab.id, msg).catch(() => {});
  }
}
