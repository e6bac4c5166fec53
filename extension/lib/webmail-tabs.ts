// Tells the content scripts of open webmail tabs something (keys changed,
// the spam check is ready). Only tabs our content script runs in: others
// cannot receive (Thunderbird has none, and logs an error for every message
// sent to a tab that cannot receive).
import browser from 'webextension-polyfill';

export async function tellWebmailTabs(msg: object): Promise<void> {
  const url = (browser.runtime.getManifest().content_scripts ?? []).flatMap((c) => c.matches ?? []);
  if (url.length === 0) return;
  for (const tab of await browser.tabs.query({ url })) {
    if (tab.id !== undefined) browser.tabs.sendMessage(tab.id, msg).catch(() => {});
  }
}
