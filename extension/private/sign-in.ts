// Connecting from the mail address (docs/connecting.md), in the background:
// find the provider the mail domain names, sign in there with the mail
// password (which goes to the provider and nowhere else, and is not kept),
// keep the token from expiring while the extension is installed, and give it
// up on disconnect. The options page asks for host permissions on the click
// (sign-in-form.ts); the background only checks them.
import browser from 'webextension-polyfill';
import { discoverProvider, keepTokenAlive, revokeToken, signIn } from '../../protocol/sign-in-client.js';
import { providerPermission } from './provider-permission.js';
import type { ProviderConfig } from './account.js';

/** What a sign-in gives: a provider and token to connect with, or the origin the user must allow first. */
export type SignInOutcome = { provider: string; token: string } | { needsPermission: string };

const allowed = async (url: string): Promise<boolean> => {
  const wanted = providerPermission(url);
  return !wanted || browser.permissions.contains(wanted);
};

export async function signInWithMail(address: string, password: string): Promise<SignInOutcome> {
  const doc = await discoverProvider(address);
  if (!(await allowed(doc.provider))) return { needsPermission: doc.provider };
  const { token } = await signIn(doc.provider, address, password);
  return { provider: doc.provider, token };
}

/**
 * Gives a signed-in token up at its provider (one the user pasted stays
 * theirs to connect with again); a provider that cannot be reached keeps it
 * until it expires.
 */
export async function giveUpToken(provider: ProviderConfig | undefined): Promise<void> {
  if (provider?.signedIn) await revokeToken(provider.url, provider.token).catch(() => false);
}

const KEEP_ALIVE_ALARM = 'pmf-token-keep-alive';

/**
 * Once a day, uses the token (GET /tokens), which pushes back its expiry:
 * a mailbox that gets no mail for months stays connected. `refused` hears
 * of a token the provider no longer accepts (expired, revoked elsewhere).
 */
export function keepSignInAlive(current: () => Promise<ProviderConfig | undefined>, refused: () => void): void {
  browser.alarms.onAlarm.addListener((alarm) => {
    if (alarm.name !== KEEP_ALIVE_ALARM) return;
    void (async () => {
      const p = await current();
      if (p && (await keepTokenAlive(p.url, p.token)) === 'refused') refused();
    })().catch(() => {}); // offline: tried again tomorrow
  });
  // Created once: creating it again at every start of an event page would put it off for ever.
  void browser.alarms.get(KEEP_ALIVE_ALARM).then((a) => {
    if (!a) void browser.alarms.create(KEEP_ALIVE_ALARM, { periodInMinutes: 24 * 60 });
  });
}
