// The options page's section on search of all mail (remote-search.ts): remote
// indexing on or off (local-only search), and deleting the index at the
// provider, after the user confirms.
import browser from 'webextension-polyfill';
import { $, say, sayError } from '../lib/ui.js';
import { REMOTE_SETTINGS_MESSAGE, type RemoteSearchStatus, type RemoteSettingsRequest } from './messages.js';
import { t } from '../lib/i18n.js';

async function ask(change: Omit<RemoteSettingsRequest, 'type'> = {}): Promise<RemoteSearchStatus> {
  const req: RemoteSettingsRequest = { type: REMOTE_SETTINGS_MESSAGE, ...change };
  const reply = (await browser.runtime.sendMessage(req)) as
    { ok: true; value: RemoteSearchStatus } | { ok: false; error: string } | undefined;
  if (!reply) throw new Error(t('no_background_answer'));
  if (!reply.ok) throw new Error(reply.error);
  return reply.value;
}

function show(s: RemoteSearchStatus, note?: string): void {
  $<HTMLInputElement>('remote-search-on').checked = s.enabled;
  $<HTMLButtonElement>('remote-search-delete').disabled = !s.connected;
  const line = $('remote-search-status');
  if (note) say(line, note, 'ok');
  else if (s.lastError) say(line, s.lastError, 'error');
  else if (!s.connected) say(line, t('remote_connect_first'), 'info');
  else if (!s.enabled) say(line, t('remote_off'), 'info');
  else say(line, t('remote_on'), 'ok');
}

export function initRemoteSearchSection(): void {
  const box = $<HTMLInputElement>('remote-search-on');
  box.addEventListener('change', () =>
    ask({ enabled: box.checked }).then(
      (s) => show(s),
      (e: unknown) => sayError($('remote-search-status'), e),
    ),
  );
  $('remote-search-delete').addEventListener('click', () => {
    if (!confirm(t('remote_delete_confirm'))) return;
    ask({ deleteRemote: true }).then(
      (s) => show(s, t('remote_deleted')),

      (e: unknown) => sayError($('remote-search-status'), e),
    );
  });
  ask().then(show, (e: unknown) => sayError($('remote-search-status'), e));
}
