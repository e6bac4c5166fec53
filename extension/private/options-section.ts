// Settings page (and the popup’s status line): connect to the provider
// (address, access token and the user's answer on sharing topics), the model
// download's progress, what the spam check is doing, disconnect. The token
// goes to the background, which keeps it in the extension's IndexedDB. A
// provider other than loopback needs the user's permission for its origin,
// asked on the Connect click (provider-permission.ts). Both refresh when the
// background signals a change (STATUS_CHANGED): a provider that stops
// answering, or refuses the token, shows at once, with the Connect form back
// for a new token.
import browser from 'webextension-polyfill';
import { $, formatSize, say, sayError, showProgress } from '../lib/ui.js';
import { backlogText } from './backlog-text.js';
import { STATUS_CHANGED, type PrivateRequest, type PrivateStatus } from './messages.js';
import { healthText } from './provider-health.js';
import { permissionRefused, providerPermission } from './provider-permission.js';
import { initSignInForm, topicsChosen } from './sign-in-form.js';
import { t } from '../lib/i18n.js';

/** Dispatched on the document once a connect succeeded. */
export const PROVIDER_CONNECTED = 'pmf-provider-connected';

export async function askPrivate<T>(req: PrivateRequest): Promise<T> {
  const reply = (await browser.runtime.sendMessage(req)) as { ok: boolean; value?: T; error?: string } | undefined;
  if (!reply) throw new Error(t('no_background_answer'));
  if (!reply.ok) throw new Error(reply.error);
  return reply.value as T;
}

const checkedToday = (n: number) => (n === 1 ? t('spam_checked_today_one') : t('spam_checked_today', n));

/** The status line: what the check is doing, or why not, and what to do. */
function statusLine(
  s: PrivateStatus,
  where: 'popup' | 'settings',
): { text: string; kind: 'ok' | 'warn' | 'error' | 'info' } {
  if (s.connected && !s.spamCheck) return { text: t('spam_status_off'), kind: 'info' };
  if (s.health)
    return { text: healthText(s.health, where, s.held), kind: s.health.state === 'refused' ? 'error' : 'warn' };
  if (s.lastError) return { text: s.lastError.text, kind: 'error' };
  if (s.backlog && s.backlog.state !== 'done') return { text: backlogText(s.backlog), kind: 'info' };
  if (!s.connected)
    return where === 'popup'
      ? { text: t('spam_status_popup_off'), kind: 'info' }
      : { text: t('spam_status_not_connected'), kind: 'info' };
  if (where === 'popup') return { text: t('spam_status_popup_on', checkedToday(s.classifiedToday)), kind: 'ok' };
  const model = s.model ? ` ${t('spam_status_model', s.model.version, Math.round(s.model.bytes / 1024))}` : '';
  return { text: t('spam_status_connected', String(s.provider), checkedToday(s.classifiedToday)) + model, kind: 'ok' };
}

function show(s: PrivateStatus): void {
  const line = $('provider-status');
  line.dataset.connected = String(s.connected);
  line.dataset.health = s.health?.state ?? 'ok';
  const { text, kind } = statusLine(s, 'settings');
  say(line, text, kind);
  $<HTMLInputElement>('spam-check').checked = s.spamCheck;
  $<HTMLInputElement>('link-check').checked = s.linkCheck;
  $<HTMLInputElement>('move-spam').checked = s.moveSpam;
  $<HTMLInputElement>('share-topics').checked = s.topics;
  // A refused token: connect again (sign in again, or the same address with a new token), or disconnect.
  const refused = s.health?.state === 'refused';
  $('provider-connect-forms').hidden = s.connected && !refused;
  const url = $<HTMLFormElement>('provider-connect').elements.namedItem('url') as HTMLInputElement;
  if (refused && !url.value) url.value = s.provider ?? '';
  $('provider-disconnect').hidden = !s.connected;
  // For support: what failed, or how the model was opened.
  const m = s.model;
  const detail = s.health?.detail ?? s.lastError?.detail;
  const details = $('provider-details');
  details.hidden = !detail && !m;
  details.querySelector('pre')!.textContent =
    detail ??
    (m
      ? `model ${m.id} v${m.version}, ${m.bytes} bytes in IndexedDB, ${m.downloaded ? 'downloaded' : 'opened from IndexedDB'}; session ready in ${m.readyMs} ms`
      : '');
  const bar = $<HTMLProgressElement>('provider-progress');
  bar.hidden = !s.download || s.download.received >= s.download.total;
  if (s.download) {
    const { received, total } = s.download;
    showProgress(bar, received, total, t('progress_bytes', formatSize(received), formatSize(total)));
  }
}

/** Calls `refresh` whenever the background says the status changed. */
function onStatusChanged(refresh: () => unknown): void {
  browser.storage.onChanged.addListener((changes, area) => {
    if (area === 'local' && STATUS_CHANGED in changes) void refresh();
  });
}

/** One line for the popup: connected and how much was checked today, or why not; kept up to date. */
export async function showSpamStatus(line: HTMLElement): Promise<void> {
  const update = async () => {
    const s = await askPrivate<PrivateStatus>({ pmfPrivate: 'status' }).catch(() => undefined);
    if (!s) return;
    line.dataset.connected = String(s.connected);
    line.dataset.health = s.health?.state ?? 'ok';
    const { text, kind } = statusLine(s, 'popup');
    say(line, text, kind);
  };
  onStatusChanged(update);
  await update();
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
    say($('provider-status'), t('spam_connecting'), 'info');

    const poll = setInterval(() => void refresh().catch(() => {}), 300);

    try {
      show(
        await askPrivate<PrivateStatus>({
          pmfPrivate: 'connect',
          url: field('url').value,
          token: field('token').value,
          topics: topicsChosen(form),
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
  onStatusChanged(() => refresh().catch(() => {}));
  refresh().catch((e) => sayError($('provider-status'), e));
}
