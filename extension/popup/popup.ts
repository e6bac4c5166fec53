// Toolbar popup: the user's security background (so it becomes familiar),
// unlock/lock keys for the configured time; links to search and options.
import '../lib/localize-page.js';
import { loadSecurityBackground, paintSecurityBackground } from '../lib/security-background.js';
import { mountUnlockForm } from '../lib/unlock-form.js';
import { $ } from '../lib/ui.js';
import { showSpamStatus } from '../private/options-section.js';

void loadSecurityBackground().then((b) => paintSecurityBackground($('security-preview'), $('security-phrase'), b));
mountUnlockForm($('unlock-panel'));
void showSpamStatus($('spam-status'));
