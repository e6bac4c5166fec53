// Toolbar popup: unlock/lock keys for the configured time; links to search
// and options.
import { mountUnlockForm } from '../lib/unlock-form.js';
import { $ } from '../lib/ui.js';
import { showSpamStatus } from '../private/options-section.js';

mountUnlockForm($('unlock-panel'));
void showSpamStatus($('spam-status'));
