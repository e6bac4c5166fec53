// Thunderbird message display action popup: which way the displayed message
// was decrypted (see displayed-message.ts), its signature and its text.
import '../lib/localize-page.js';
import browser from 'webextension-polyfill';
import { ask } from '../lib/rpc.js';
import { $, formatSize, say, sayError } from '../lib/ui.js';
import type { DisplayedMessageReport } from './message-report.js';
import { PATH_TEXT, tone } from './report-view.js';
import { t } from '../lib/i18n.js';

async function show(): Promise<void> {
  const [tab] = await browser.tabs.query({ active: true, currentWindow: true });
  if (tab?.id === undefined) throw new Error(t('tb_select_message'));
  const r = await ask<DisplayedMessageReport>({ type: 'tb-displayed-message', tabId: tab.id });
  $('subject').textContent = r.result?.subject ?? r.subject;
  say($('summary'), r.summary, tone(r));
  $('summary').dataset.path = r.path;
  $('by').textContent = PATH_TEXT[r.path];
  $('unlock-link').hidden = r.result?.status !== 'locked';
  if (r.spam) say($('spam'), r.spam.join(' '));
  if (r.text) {
    $('text').textContent = r.text;
    $('text').hidden = false;
  }
  for (const a of r.attachments ?? [])
    $('attachments').append(
      Object.assign(document.createElement('li'), {
        textContent: t('attachment_line', a.name, a.type, formatSize(a.size)),
      }),
    );
  $('attachments').hidden = !r.attachments?.length;
}

show().catch((e) => sayError($('summary'), e));
