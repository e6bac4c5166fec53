// First-run page, opened once on install (background runtime.onInstalled):
// what the add-on does, then key setup, unlocking, where to read mail and
// connecting to the provider for private spam filtering, worded for the
// client it runs in.
import '../lib/localize-page.js';
import type { Status } from '../lib/messages.js';
import { ask } from '../lib/rpc.js';
import { $, say, sayError } from '../lib/ui.js';
import { mountUnlockForm } from '../lib/unlock-form.js';
import { thunderbird } from '../thunderbird/api.js';
import { t } from '../lib/i18n.js';

const inThunderbird = thunderbird() !== undefined;
$('key-thunderbird').hidden = !inThunderbird;
$('mail-thunderbird').hidden = !inThunderbird;
$('mail-webmail').hidden = inThunderbird;
// One-click connect comes from a webmail page; Thunderbird connects on the settings page.
$('spam-webmail').hidden = inThunderbird;
$('spam-thunderbird').hidden = !inThunderbird;

async function keyStep(): Promise<void> {
  const s = await ask<Status>({ type: 'status' });
  if (s.privateKeys > 0) say($('key-step'), t('welcome_keys_done', s.privateKeys), 'ok');
  else
    say(
      $('key-step'),
      inThunderbird ? t('welcome_keys_thunderbird') : t('welcome_keys_none'),

      'info',
    );
}

mountUnlockForm($('unlock-panel'), () => void keyStep());
keyStep().catch((e) => sayError($('key-step'), e));
