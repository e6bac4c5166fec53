// The options page's section on search of all mail (remote-search.ts): remote
// indexing on or off (local-only search), and deleting the index at the
// provider, after the user confirms.
import browser from 'webextension-polyfill';
import { $, say, sayError } from '../lib/ui.js';
import { REMOTE_SETTINGS_MESSAGE, type RemoteSearchStatus, type RemoteSettingsRequest } from './messages.js';

async function ask(change: Omit<RemoteSettingsRequest, 'type'> = {}): Promise<RemoteSearchStatus> {
  const req: RemoteSettingsRequest = { type: REMOTE_SETTINGS_MESSAGE, ...change };
  const reply = (await browser.runtime.sendMessage(req)) as
    { ok: true; value: RemoteSearchStatus } | { ok: false; error: string } | undefined;
  if (!reply) throw new Error('The extension background did not answer.');
  if (!reply.ok) throw new Error(reply.error);
  return reply.value;
}

function show(s: RemoteSearchStatus, note?: string): void {
  $<HTMLInputElement>('remote-search-on').checked = s.enabled;
  $<HTMLButtonElement>('remote-search-delete').disabled = !s.connected;
  const line = $('remote-search-status');
  if (note) say(line, note, 'ok');
  else if (s.lastError) say(line, s.lastError, 'error');
  else if (!s.connected) say(line, 'Connect to your provider above to search all your mail from any device.', 'info');
  else if (!s.enabled) say(line, 'Off: search finds only mail decrypted on this device.', 'info');
  else say(line, 'On: mail decrypted here is added to your encrypted index at the provider.', 'ok');
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
    if (
      !confirm(
        'Delete your search index at the provider? Search of all mail then finds nothing until your devices add mail again.',
      )
    )
      return;
    ask({ deleteRemote: true }).then(
      (s) => show(s, 'Deleted: your provider no longer holds a search index of your mail.'),
      (e: unknown) => sayError($('remote-search-status'), e),
    );
  });
  ask().then(show, (e: unknown) => sayError($('remote-search-status'), e));
}
