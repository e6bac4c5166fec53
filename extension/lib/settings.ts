// User settings in browser.storage.local.
import browser from 'webextension-polyfill';
import { DEFAULT_UNLOCK_MINUTES } from './unlock-cache.js';

export interface Settings {
  /** How long an unlocked key stays in memory. */
  unlockMinutes: number;
}

export const UNLOCK_MINUTES_RANGE = { min: 1, max: 24 * 60 } as const;

export async function loadSettings(): Promise<Settings> {
  const { unlockMinutes } = await browser.storage.local.get('unlockMinutes');
  const n = Number(unlockMinutes);
  return {
    unlockMinutes:
      Number.isInteger(n) && n >= UNLOCK_MINUTES_RANGE.min && n <= UNLOCK_MINUTES_RANGE.max
        ? n
        : DEFAULT_UNLOCK_MINUTES,
  };
}

export async function saveSettings(s: Settings): Promise<void> {
  if (
    !Number.isInteger(s.unlockMinutes) ||
    s.unlockMinutes < UNLOCK_MINUTES_RANGE.min ||
    s.unlockMinutes > UNLOCK_MINUTES_RANGE.max
  ) {
    throw new Error(
      `Unlock time must be a whole number of minutes between ${UNLOCK_MINUTES_RANGE.min} and ${UNLOCK_MINUTES_RANGE.max}.`,
    );
  }
  await browser.storage.local.set({ unlockMinutes: s.unlockMinutes });
}
