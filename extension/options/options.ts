// Settings page: whether the search and spam engine works, key management
// (generate, import, export public, delete) and settings. Keys are read and written here directly
// (same IndexedDB as the background); the background is told to refresh.
import './topic-question.js'; // before the page is localized: the copies carry data-i18n
import '../lib/localize-page.js';
import { describeSelfTest, runCoreSelfTest, selfTestDetail, startCoreWorker } from '../lib/core-status.js';
import { keyTypeName } from '../lib/key-type.js';
import { KeyStore, type KeyInfo } from '../lib/keystore.js';
import { passphraseStrength } from '../lib/passphrase-strength.js';
import { TB_INDEX_PORT } from '../lib/messages.js';
import { ask } from '../lib/rpc.js';
import { thunderbird } from '../thunderbird/api.js';
import type { MailboxTally } from '../thunderbird/displayed-message.js';
import browser from 'webextension-polyfill';
import { loadSettings, saveSettings } from '../lib/settings.js';
import { $, formatFingerprint, say, sayError, showProgress } from '../lib/ui.js';
import { mountUnlockForm } from '../lib/unlock-form.js';
import { initPackageLogSection } from '../private/log-section.js';
import { initProviderSection } from '../private/options-section.js';
import { initRemoteSearchSection } from '../remote-search/options.js';
import { initSecuritySection } from './security-section.js';
import { initSitesSection } from './sites-section.js';
import { t } from '../lib/i18n.js';

const storePromise = KeyStore.open();

async function showCoreStatus(): Promise<void> {
  const line = $('wasm-status');
  try {
    const r = await runCoreSelfTest(startCoreWorker());
    line.dataset.state = r.ok ? 'ok' : 'failed';
    say(line, describeSelfTest(r), r.ok ? 'ok' : 'error');
    $('wasm-details').querySelector('pre')!.textContent = selfTestDetail(r);
    $('wasm-details').hidden = false;
  } catch (e) {
    line.dataset.state = 'failed';
    sayError(line, e, t('options_engine_failed'));
  }
}

async function renderKeys(): Promise<void> {
  void refreshUnlock();
  const keys = await (await storePromise).list();
  const tbody = $('keys').querySelector('tbody')!;
  tbody.replaceChildren(...keys.map(keyRow));
  $('keys').hidden = keys.length === 0;
  $('keys-empty').hidden = keys.length > 0;
}

function keyRow(k: KeyInfo): HTMLTableRowElement {
  const tr = document.createElement('tr');
  tr.dataset.fingerprint = k.fingerprint;
  const cell = (text: string) => {
    const td = document.createElement('td');
    td.textContent = text;
    return td;
  };
  const fp = document.createElement('td');
  fp.append(Object.assign(document.createElement('code'), { textContent: formatFingerprint(k.fingerprint) }));
  const actions = document.createElement('td');
  const exportBtn = Object.assign(document.createElement('button'), {
    type: 'button',
    textContent: t('options_export_key'),
  });
  exportBtn.addEventListener('click', () => void exportKey(k));
  const deleteBtn = Object.assign(document.createElement('button'), {
    type: 'button',
    textContent: t('options_delete'),
  });
  deleteBtn.addEventListener('click', () => void deleteKey(k));
  actions.append(exportBtn, deleteBtn);
  tr.append(
    cell(k.userIds.join('\n')),
    fp,
    cell(t(k.hasPrivate ? 'options_key_private' : 'options_key_public', keyTypeName(k.algorithm))),
    actions,
  );
  return tr;
}

async function exportKey(k: KeyInfo): Promise<void> {
  const out = $<HTMLTextAreaElement>('export-out');
  out.value = await (await storePromise).exportPublic(k.fingerprint);
  out.hidden = false;
  out.select();
  say($('keys-status'), t('options_exported', k.userIds[0] ?? k.fingerprint), 'ok');
}

async function deleteKey(k: KeyInfo): Promise<void> {
  const question = k.hasPrivate ? 'options_delete_private_confirm' : 'options_delete_public_confirm';
  if (!confirm(t(question, k.userIds.join(', '), formatFingerprint(k.fingerprint)))) return;
  try {
    await (await storePromise).delete(k.fingerprint);
    await ask({ type: 'keys-changed', deleted: [k.fingerprint] });
    say($('keys-status'), t('options_deleted', k.userIds[0] ?? k.fingerprint), 'ok');
  } catch (e) {
    sayError($('keys-status'), e);
  }
  await renderKeys();
}

/** How hard the new passphrase is to guess, as the user types it; the key store enforces the same bar. */
function showStrength(input: HTMLInputElement): void {
  input.addEventListener('input', () => {
    const { strong, fraction, advice } = passphraseStrength(input.value);
    $<HTMLMeterElement>('passphrase-meter').value = fraction;
    if (strong || !input.value) $('passphrase-advice').hidden = true;
    else say($('passphrase-advice'), advice, 'warn');
  });
}

function onGenerate(form: HTMLFormElement): void {
  showStrength(form.elements.namedItem('passphrase') as HTMLInputElement);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const f = new FormData(form);
    const status = $('generate-status');
    const bar = $<HTMLProgressElement>('generate-progress');
    if (f.get('passphrase') !== f.get('confirm')) return say(status, t('options_passphrases_differ'), 'error');
    const button = form.querySelector('button')!;
    button.disabled = true;
    bar.hidden = false;
    try {
      const info = await (
        await storePromise
      ).generate(
        {
          name: String(f.get('name') ?? ''),
          email: String(f.get('email') ?? ''),
          passphrase: String(f.get('passphrase') ?? ''),
        },
        (fraction, label) => {
          showProgress(bar, fraction, 1, label);
          say(status, label);
        },
      );
      bar.hidden = true; // before announcing success, so the page never shows both
      form.reset();
      say(status, t('options_generated', formatFingerprint(info.fingerprint)), 'ok');
      await ask({ type: 'keys-changed' });
    } catch (e) {
      sayError(status, e);
    } finally {
      button.disabled = false;
      bar.hidden = true;
      await renderKeys();
    }
  });
}

function onImport(form: HTMLFormElement): void {
  const textarea = form.elements.namedItem('armored') as HTMLTextAreaElement;
  (form.elements.namedItem('file') as HTMLInputElement).addEventListener('change', async (ev) => {
    const file = (ev.target as HTMLInputElement).files?.[0];
    if (!file) return;
    if (file.size > 1 << 20) return say($('import-status'), t('options_file_too_large'), 'error');
    textarea.value = await file.text();
  });
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    const f = new FormData(form);
    const status = $('import-status');
    try {
      const infos = await (
        await storePromise
      ).importArmored(String(f.get('armored') ?? ''), String(f.get('passphrase') ?? '') || undefined);
      form.reset();
      const keys = infos.map((k) =>
        t(k.hasPrivate ? 'options_imported_private' : 'options_imported_public', k.userIds[0] ?? ''),
      );
      say(status, t('options_imported', keys.join(', ')), 'ok');
      await ask({ type: 'keys-changed' });
    } catch (e) {
      // Nothing was stored; the form keeps its content for a retry.
      sayError(status, e);
    }
    await renderKeys();
  });
}

async function onSettings(form: HTMLFormElement): Promise<void> {
  const input = form.elements.namedItem('unlockMinutes') as HTMLInputElement;
  input.value = String((await loadSettings()).unlockMinutes);
  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      await saveSettings({ unlockMinutes: Number(input.value) });
      say($('settings-status'), t('options_saved_unlock'), 'ok');
    } catch (e) {
      sayError($('settings-status'), e);
    }
  });
}

/** Thunderbird only: index all mail through the background, with progress. */
function offerThunderbirdIndexing(): void {
  if (!thunderbird()) return;
  $('tb-index').hidden = false;
  const button = $<HTMLButtonElement>('tb-index-start');
  const bar = $<HTMLProgressElement>('tb-index-progress');
  const status = $('tb-index-status');
  let port: ReturnType<typeof browser.runtime.connect> | undefined;
  let pausing = false;
  button.addEventListener('click', () => {
    if (port) {
      // Running: the button pauses (after the message being read).
      pausing = true;
      button.disabled = true;
      port.postMessage({ pause: true });
      return;
    }
    pausing = false;
    button.textContent = t('options_tb_pause');
    bar.hidden = false;
    say(status, t('options_tb_listing'));
    port = browser.runtime.connect({ name: TB_INDEX_PORT });
    port.onMessage.addListener((raw: unknown) => {
      const msg = raw as { progress?: MailboxTally; result?: MailboxTally; error?: string };
      const tally = msg.progress ?? msg.result;
      if (tally) {
        showProgress(bar, tally.done, Math.max(1, tally.total), t('progress_read', tally.done, tally.total));
        say(status, t('options_tb_progress', tally.done, tally.total, tally.indexed));
      }
      if (msg.result || msg.error) {
        const done = msg.result && msg.result.done === msg.result.total;
        if (msg.error) say(status, msg.error, 'error');
        else if (!done && pausing) say(status, t('options_tb_paused', status.textContent ?? ''), 'ok');
        else if (msg.result!.locked)
          say(status, t('options_tb_locked', status.textContent ?? '', msg.result!.locked), 'error');
        else say(status, t('options_tb_done', status.textContent ?? ''), 'ok');
        button.textContent = t(!done && pausing ? 'options_tb_resume' : 'options_tb_index_all');
        button.disabled = false;
        port?.disconnect();
        port = undefined;
      }
    });
  });
}

/**
 * Thunderbird: spam goes to the mail account's own Junk folder, which on an
 * IMAP account is on the provider's server; say so, and what turning it off means there.
 */
function thunderbirdWording(): void {
  if (!thunderbird()) return;
  $('move-spam-text').textContent = t('options_move_spam_thunderbird');
}

const refreshUnlock = mountUnlockForm($('unlock-panel'));
thunderbirdWording();
void showCoreStatus();
offerThunderbirdIndexing();
void renderKeys();
onGenerate($<HTMLFormElement>('generate'));
onImport($<HTMLFormElement>('import'));
void onSettings($<HTMLFormElement>('settings'));
initProviderSection();
initPackageLogSection();
initRemoteSearchSection();
initSitesSection();
void initSecuritySection();
