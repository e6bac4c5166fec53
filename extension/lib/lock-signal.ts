// Tells every open view of decrypted text that the keys were locked or
// expired, so none leaves it on screen (and, after an unlock, views that
// said "locked" that they may show their message now). A storage.local change reaches
// extension pages (the viewer frames in webmail) and Thunderbird's message
// display scripts (the banner) alike; runtime messages reach only the first,
// and tabs.sendMessage to a tab without the script logs an error in
// Thunderbird. The value is only the time: nothing secret.
import browser from 'webextension-polyfill';

const LOCKED_AT = 'pmf-locked-at';
const UNLOCKED_AT = 'pmf-unlocked-at';

/** From the background, at lock and expiry. */
export async function signalLocked(): Promise<void> {
  await browser.storage.local.set({ [LOCKED_AT]: Date.now() });
}

/** In a view: wipe() runs when the keys are locked or expire. */
export function onKeysLocked(wipe: () => void): void {
  browser.storage.onChanged.addListener((changes, area) => {
    if (area === 'local' && LOCKED_AT in changes) wipe();
  });
}

/** From the background, after an unlock: views that said "locked" may show their message now. */
export async function signalUnlocked(): Promise<void> {
  await browser.storage.local.set({ [UNLOCKED_AT]: Date.now() });
}

export function onKeysUnlocked(show: () => void): void {
  browser.storage.onChanged.addListener((changes, area) => {
    if (area === 'local' && UNLOCKED_AT in changes) show();
  });
}
