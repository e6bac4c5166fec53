// Options → Your security background (lib/security-background.ts): shows it,
// lets the user choose a phrase and draw a new pattern. Read and written here
// directly (the extension's IndexedDB); the next status drawn uses it.
import {
  loadSecurityBackground,
  paintSecurityBackground,
  randomSecurityBackground,
  saveSecurityBackground,
  type SecurityBackground,
} from '../lib/security-background.js';
import { $, say, sayError } from '../lib/ui.js';
import { t } from '../lib/i18n.js';

export async function initSecuritySection(): Promise<void> {
  let current: SecurityBackground = await loadSecurityBackground();
  const form = $<HTMLFormElement>('security-form');
  const phrase = form.elements.namedItem('phrase') as HTMLInputElement;
  const paint = () => paintSecurityBackground($('security-preview'), $('security-phrase'), current);
  phrase.value = current.phrase;
  paint();
  $('security-new').addEventListener('click', () => {
    current = randomSecurityBackground(phrase.value.trim());
    paint();
    say($('security-status'), t('security_new_pattern'), 'info');
  });
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void (async () => {
      try {
        current = { ...current, phrase: phrase.value.trim() };
        await saveSecurityBackground(current);
        paint();
        say($('security-status'), t('security_saved'), 'ok');
      } catch (err) {
        sayError($('security-status'), err);
      }
    })();
  });
}
