// How hard a passphrase is to guess, estimated by zxcvbn (dictionaries of
// common passwords, English words and names, keyboard patterns, dates and
// repeats): a length rule accepts "password", this does not. A stolen key file
// is attacked offline, one Argon2id guess at a time (keystore.ts), so the
// bar is a number of guesses, not a score.
import { zxcvbn, zxcvbnOptions } from '@zxcvbn-ts/core';
import * as common from '@zxcvbn-ts/language-common';
import * as en from '@zxcvbn-ts/language-en';

/**
 * 10^12 guesses: at 10,000 Argon2id guesses a second (a large cluster; one core does a few)
 * about three years. zxcvbn's top score starts at 10^10, which it reaches for "passphrase-one".
 */
export const MIN_GUESSES_LOG10 = 12;

let configured = false;
function estimate(passphrase: string) {
  if (!configured) {
    zxcvbnOptions.setOptions({
      dictionary: { ...common.dictionary, ...en.dictionary },
      graphs: common.adjacencyGraphs,
      translations: en.translations,
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
  const advice = [
    'This passphrase would be too easy to guess for someone who steals your key file.',
    ...hints,
    'A few unrelated words that are not a quote or a phrase make a strong and memorable one.',
  ].join(' ');
  return { strong, fraction, advice };
}
