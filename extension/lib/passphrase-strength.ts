// How hard a passphrase is to guess, estimated by zxcvbn (dictionaries of
// common passwords, English words and names, keyboard patterns, dates and
// repeats; German words too, and German advice, when the UI is German): a length rule accepts "password", this does not. A stolen key file
// is attacked offline, one Argon2id guess at a time (keystore.ts), so the
// bar is a number of guesses, not a score.
import { zxcvbn, zxcvbnOptions } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';
import * as de from '@zxcvbn-ts/language-de';
import * as en from '@zxcvbn-ts/language-en';
import { t } from './i18n.js';

/**
 * 10^12 guesses: at 10,000 Argon2id guesses a second (a large cluster; one core does a few)
 * about three years. zxcvbn's top score starts at 10^10, which it reaches for "passphrase-one".
 */
export const MIN_GUESSES_LOG10 = 12;

const germanLists = Object.fromEntries(Object.entries(de.dictionary).map(([name, words]) => [`de-${name}`, words]));

let configured = false;
function estimate(passphrase: string) {
  if (!configured) {
    const german = t('lang') === 'de';
    zxcvbnOptions.setOptions({
      // Both languages name their lists alike (commonWords, …): German ones under their own names.
      dictionary: { ...common.dictionary, ...en.dictionary, ...(german ? germanLists : {}) },
      graphs: common.adjacencyGraphs,
      translations: german ? de.translations : en.translations,
    });
    configured = true;
  }
  return zxcvbn(passphrase);
}

export interface Strength {
  strong: boolean;
  /** 0..1 of the way to the bar, for a meter. */
  fraction: number;
  /** What to do, in plain words (empty when strong). */
  advice: string;
}

export function passphraseStrength(passphrase: string): Strength {
  const r = estimate(passphrase);
  const strong = r.guessesLog10 >= MIN_GUESSES_LOG10;
  const fraction = Math.min(1, r.guessesLog10 / MIN_GUESSES_LOG10);
  if (strong) return { strong, fraction, advice: '' };
  const hints = [r.feedback.warning, ...r.feedback.suggestions].filter((s): s is string => !!s);
  const advice = [t('passphrase_too_easy'), ...hints, t('passphrase_how_to')].join(' ');
  return { strong, fraction, advice };
}
