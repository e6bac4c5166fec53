// Options page (and the popup’s status line): connect to the provider (address + access token), the model
// download's progress, what the spam check is doing, disconnect. The token
// goes to the background, which keeps it in the extension's IndexedDB. A
// provider other than loopback needs the user's permission for its origin,
// asked on the Connect click (provider-permission.ts).
import browser from 'webextension-polyfill';
import { $, say, sayError } from '../lib/ui.js';
import type { PrivateRequest, PrivateStatus } from './messages.js';
import { permissionRefused, providerPermission } from './provider-permission.js';
import { initSignInForm } from './sign-in-form.js';

/** Dispatched on the document once a connect succeeded. */
export const PROVIDER_CONNECTED = 'pmf-provider-connected';

export async function askPrivate<T>(req: PrivateRequest): Promise<T> {
  const reply = (await browser.runtime.sendMessage(req)) as { ok: boolean; value?: T; error?: string } | undefined;
  if (!reply) throw new Error('The extension background did not answer.');
  if (!reply.ok) throw new Error(reply.error);
  return reply.value as T;
}

function show(s: PrivateStatus): void {
  const line = $('provider-status');
  line.dataset.connected = String(s.connected);
  if (s.lastError) say(line, s.lastError.text, 'error');
  else if (s.connected && !s.spamCheck) say(line, `Connected to ${s.provider}; the spam check is turned off.`, 'info');
  else if (s.connected)
    say(
      line,
      `Connected to ${s.provider}. ${s.classifiedToday} message(s) checked today.` +
        (s.model
          ? ` Spam model version ${s.model.version} (${Math.round(s.model.bytes / 1024)} KB) is stored here.`
          : ''),
      'ok',
    );
  else say(line, 'Not connected: enter your mail address and its password.', 'info');
  $<HTMLInputElement>('spam-check').checked = s.spamCheck;
  $<HTMLInputElement>('link-check').checked = s.linkCheck;
  $<HTMLInputElement>('move-spam').checked = s.moveSpam;
  $<HTMLInputElement>('share-topics').checked = s.topics;
  $('provider-connect-forms').hidden = s.connected;
  $('provider-disconnect').hidden = !s.connected;
  // For support: what failed, or how the model was opened.
  const m = s.model;
  const details = $('provider-details');
  details.hidden = !s.lastError && !m;
  details.querySelector('pre')!.textContent =
    s.lastError?.detail ??
    (m
      ? `model ${m.id} v${m.version}, ${m.bytes} bytes in IndexedDB, ${m.downloaded ? 'downloaded' : 'opened from IndexedDB'}; session ready in ${m.readyMs} ms`
      : '');
  const bar = $<HTMLProgressElement>('provider-progress');
  bar.hidden = !s.download || s.download.received >= s.download.total;
  if (s.download) {
    bar.max = s.download.total;
    bar.value = s.download.received;
  }
}

/** One line for the popup: connected and how much was checked today, or why not. */
export async function showSpamStatus(line: HTMLElement): Promise<void> {
  const s = await askPrivate<PrivateStatus>({ pmfPrivate: 'status' }).catch(() => undefined);
  if (!s) return;
  line.dataset.connected = String(s.connected);
  if (!s.spamCheck) say(line, 'Spam check turned off in Keys & options: nothing about your mail is sent.', 'info');
  else if (s.lastError) say(line, s.lastError.text, 'error');
  else if (s.connected) say(line, `Spam check on: ${s.classifiedToday} message(s) checked today.`, 'ok');
  else say(line, 'Spam check off: connect to your provider in Keys & options.', 'info');
}

const refresh = async (): Promise<PrivateStatus> => {
  const s = await askPrivate<PrivateStatus>({ pmfPrivate: 'status' });
  show(s);
  return s;
};

export function initProviderSection(): void {
  initSignInForm({
    ask: askPrivate,
    show,
    refresh,
    connected: () => document.dispatchEvent(new Event(PROVIDER_CONNECTED)),
  });
  const form = $<HTMLFormElement>('provider-connect');
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const field = (n: string) => form.elements.namedItem(n) as HTMLInputElement;
    // First, before any await: browsers grant permissions.request only while handling the click.
    const wanted = providerPermission(field('url').value);
    const allowed = wanted ? browser.permissions.request(wanted).catch(() => false) : Promise.resolve(true);
    const button = form.querySelector('button')!;
    if (!(await allowed)) return say($('provider-status'), permissionRefused(field('url').value), 'error');
    button.disabled = true;
    say($('provider-status'), 'Connecting and fetching the spam model…', 'info');
    const poll = setInterval(() => void refresh().catch(() => {}), 300);
    try {
      show(
        await askPrivate<PrivateStatus>({
          pmfPrivate: 'connect',
          url: field('url').value,
          token: field('token').value,
        }),
      );
      field('token').value = '';
      document.dispatchEvent(new Event(PROVIDER_CONNECTED)); // the log section shows the head just checked
    } catch (e) {
      await refresh().catch(() => {});
      sayError($('provider-status'), e);
    } finally {
      clearInterval(poll);
      button.disabled = false;
    }
  });
  for (const [id, key] of [
    ['spam-check', 'spamCheck'],
    ['link-check', 'linkCheck'],
    ['move-spam', 'moveSpam'],
    ['share-topics', 'topics'],
  ] as const) {
    const box = $<HTMLInputElement>(id);
    box.addEventListener('change', () =>
      askPrivate<PrivateStatus>({ pmfPrivate: 'settings', [key]: box.checked }).then(show, async (e: unknown) => {
        await refresh().catch(() => {});
        sayError($('provider-status'), e);
      }),
    );
  }
  $('provider-disconnect').addEventListener('click', async () => show(await askPrivate({ pmfPrivate: 'disconnect' })));
  refresh().catch((e) => sayError($('provider-status'), e));
}
