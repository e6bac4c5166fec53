// The unlock / lock panel, on every page that tells the user to unlock (the
// toolbar popup, options, search, first run): key status line, passphrase
// form and Lock button, built into an empty container.
import type { Status } from './messages.js';
import { ask } from './rpc.js';
import { formatTime, say, sayError } from './ui.js';
import { t } from './i18n.js';
import { fillElement } from './i18n-dom.js';

function el<K extends keyof HTMLElementTagNameMap>(tag: K, props: object = {}): HTMLElementTagNameMap[K] {
  return Object.assign(document.createElement(tag), props);
}

/** onChange runs after every unlock or lock (e.g. to retry a search); returns a refresh for key changes. */
export function mountUnlockForm(container: HTMLElement, onChange: () => void = () => {}): () => Promise<void> {
  const line = el('p', { id: 'key-status', className: 'status', textContent: t('unlock_loading') });
  line.setAttribute('role', 'status');
  const input = el('input', { type: 'password', name: 'passphrase', required: true, autocomplete: 'current-password' });
  const label = el('label');
  label.append(input);
  fillElement(label, 'unlock_passphrase');
  const form = el('form', { id: 'unlock', hidden: true });
  form.append(label, el('button', { type: 'submit', textContent: t('unlock_button') }));
  const lock = el('button', { id: 'lock', type: 'button', textContent: t('lock_now'), hidden: true });
  const result = el('p', { id: 'unlock-status', className: 'status', hidden: true });
  result.setAttribute('role', 'status');
  container.append(line, form, lock, result);

  async function refresh(): Promise<void> {
    const s = await ask<Status>({ type: 'status' });
    line.dataset.unlocked = String(s.unlocked);
    if (s.privateKeys === 0) say(line, t('unlock_no_key'), 'info');
    else if (s.unlocked === 0) say(line, t('unlock_locked', s.privateKeys, s.unlockMinutes), 'info');
    else say(line, t('unlock_open', s.unlocked, s.privateKeys, formatTime(s.expiresAt!)), 'ok');
    form.hidden = s.privateKeys === 0 || s.unlocked === s.privateKeys;
    lock.hidden = s.unlocked === 0;
  }

  form.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    try {
      const n = await ask<number>({ type: 'unlock', passphrase: input.value });
      say(result, t('unlock_done', n), 'ok');
      onChange();
    } catch (e) {
      sayError(result, e);
    } finally {
      input.value = '';
    }
    await refresh();
  });
  lock.addEventListener('click', async () => {
    await ask({ type: 'lock' });
    say(result, t('locked'), 'ok');

    onChange();
    await refresh();
  });
  const shown = () => refresh().catch((e) => sayError(line, e));
  void shown();
  return shown;
}
