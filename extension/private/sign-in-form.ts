// The options page's "connect with your mail account" form: the mail address
// and its password go to the background, which finds the provider from the
// address and signs in (sign-in.ts). Host permissions are asked on the click,
// before anything is awaited (browsers allow it only then): the mail domain
// and its subdomains, and a provider elsewhere once discovery has named it
// (the background then asks for a second click).
import browser from 'webextension-polyfill';
import { $, say, sayError } from '../lib/ui.js';
import type { PrivateStatus } from './messages.js';
import { signInPermission } from './provider-permission.js';
import { t } from '../lib/i18n.js';

/** The user's answer to the form's topic question (the radios are required, so there is one). */
export const topicsChosen = (form: HTMLFormElement): boolean | undefined => {
  const v = form.querySelector<HTMLInputElement>('input[name=topics]:checked')?.value;
  return v === undefined ? undefined : v === 'share';
};

export function initSignInForm(deps: {
  ask<T>(req: { pmfPrivate: 'signIn'; address: string; password: string; topics?: boolean }): Promise<T>;
  show(s: PrivateStatus): void;
  refresh(): Promise<unknown>;
  connected(): void;
}): void {
  const form = $<HTMLFormElement>('provider-sign-in');
  /** Providers discovery named that were not allowed yet, by mail address. */
  const elsewhere = new Map<string, string>();
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const field = (n: string) => form.elements.namedItem(n) as HTMLInputElement;
    const address = field('address').value.trim();
    const wanted = signInPermission(address, elsewhere.get(address));
    const granted = wanted ? browser.permissions.request(wanted).catch(() => false) : Promise.resolve(true);
    const line = $('provider-status');
    if (!(await granted)) return say(line, t('sign_in_refused'), 'error');
    const button = form.querySelector('button')!;
    button.disabled = true;
    say(line, t('sign_in_finding'), 'info');
    const poll = setInterval(() => void deps.refresh().catch(() => {}), 300);
    try {
      const answer = await deps.ask<PrivateStatus | { needsPermission: string }>({
        pmfPrivate: 'signIn',
        address,
        password: field('password').value,
        topics: topicsChosen(form),
      });
      if ('needsPermission' in answer) {
        elsewhere.set(address, answer.needsPermission);
        return say(
          line,
          t('sign_in_elsewhere', new URL(answer.needsPermission).host),

          'warn',
        );
      }
      field('password').value = '';
      deps.show(answer);
      deps.connected();
    } catch (e) {
      await deps.refresh().catch(() => {});
      sayError(line, e);
    } finally {
      clearInterval(poll);
      button.disabled = false;
    }
  });
}
