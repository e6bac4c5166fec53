// Thunderbird message display action popup: which way the displayed message
// was decrypted (see displayed-message.ts), its signature and its text.
import browser from 'webextension-polyfill';
import { ask } from '../lib/rpc.js';
import { $, say, sayError } from '../lib/ui.js';
import type { DisplayedMessageReport } from './displayed-message.js';

const BY: Record<DisplayedMessageReport['path'], string> = {
  extension: 'Read with the keys stored in this add-on.',
  thunderbird: 'Read with the key stored in Thunderbird; no need to import it into this add-on.',
  plain: '',
  none: '',
};

function tone(r: DisplayedMessageReport): 'ok' | 'warn' | 'error' | 'info' {
  const sig = r.result?.signature.status;
  if (r.path === 'plain') return 'info';
  if (sig === 'invalid') return 'error';
  if (r.path === 'thunderbird' || sig === 'valid') return 'ok';
  if (r.path === 'extension') return 'warn';
  return r.result?.status === 'locked' || r.result?.status === 'not-for-this-key' ? 'warn' : 'error';
}

async function show(): Promise<void> {
  const [tab] = await browser.tabs.query({ active: true, currentWindow: true });
  if (tab?.id === undefined) throw new Error('Select a message first.');
  const r = await ask<DisplayedMessageReport>({ type: 'tb-displayed-message', tabId: tab.id });
  $('subject').textContent = r.result?.subject ?? r.subject;
  say($('summary'), r.summary, tone(r));
  $('summary').dataset.path = r.path;
  $('by').textContent = BY[r.path];
  $('unlock-link').hidden = r.result?.status !== 'locked';
  if (r.text) {
    $('text').textContent = r.text;
    $('text').hidden = false;
  }
}

show().catch((e) => sayError($('summary'), e));
