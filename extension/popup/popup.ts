// Toolbar popup: unlock/lock keys for the configured time; links to search
// and options.
import type { Status } from '../lib/messages.js';
import { ask } from '../lib/rpc.js';
import { $, errorText, formatTime, say } from '../lib/ui.js';
import { showSpamStatus } from '../private/options-section.js';

async function refresh(): Promise<void> {
  const s = await ask<Status>({ type: 'status' });
  const line = $('key-status');
  line.dataset.unlocked = String(s.unlocked);
  if (s.privateKeys === 0) say(line, 'No private key yet: add one in Keys & options.', 'info');
  else if (s.unlocked === 0)
    say(line, `${s.privateKeys} private key(s), locked. Unlocking keeps them open for ${s.unlockMinutes} min.`, 'info');
  else say(line, `${s.unlocked} of ${s.privateKeys} key(s) unlocked until ${formatTime(s.expiresAt!)}.`, 'ok');
  $('unlock').hidden = s.privateKeys === 0 || s.unlocked === s.privateKeys;
  $('lock').hidden = s.unlocked === 0;
}

$<HTMLFormElement>('unlock').addEventListener('submit', async (ev) => {
  ev.preventDefault();
  const form = ev.target as HTMLFormElement;
  const input = form.elements.namedItem('passphrase') as HTMLInputElement;
  try {
    const n = await ask<number>({ type: 'unlock', passphrase: input.value });
    say($('unlock-status'), `Unlocked ${n} key(s).`, 'ok');
  } catch (e) {
    say($('unlock-status'), errorText(e), 'error');
  } finally {
    input.value = '';
  }
  await refresh();
});

$('lock').addEventListener('click', async () => {
  await ask({ type: 'lock' });
  say($('unlock-status'), 'Locked.', 'ok');
  await refresh();
});

refresh().catch((e) => say($('key-status'), errorText(e), 'error'));
void showSpamStatus($('spam-status'));
