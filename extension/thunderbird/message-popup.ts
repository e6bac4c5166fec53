// Thunderbird message display action popup: decryption and signature status
// of the displayed message (see displayed-message.ts).
import browser from 'webextension-polyfill';
import { ask } from '../lib/rpc.js';
import { $, errorText, say } from '../lib/ui.js';
import type { DisplayedMessageReport } from './displayed-message.js';

const BY = {
  extension: 'Decrypted and verified by this extension with your keys.',
  thunderbird: "Decrypted by Thunderbird's built-in OpenPGP.",
  none: '',
};

async function show(): Promise<void> {
  const [tab] = await browser.tabs.query({ active: true, currentWindow: true });
  if (tab?.id === undefined) throw new Error('No active message tab.');
  const r = await ask<DisplayedMessageReport>({ type: 'tb-displayed-message', tabId: tab.id });
  $('subject').textContent = r.result?.subject ?? r.subject;
  const ok =
    r.result?.signature.status === 'valid' || (r.decryptedBy !== 'none' && r.result?.signature.status !== 'invalid');
  say($('summary'), r.summary, ok ? 'ok' : 'error');
  $('by').textContent = BY[r.decryptedBy];
  if (r.decryptedBy === 'extension' && r.result?.text) {
    $('text').textContent = r.result.text;
    $('text').hidden = false;
  }
}

show().catch((e) => say($('summary'), errorText(e), 'error'));
