// Options page, "Same spam model for everyone": the provider's package log as
// this browser last checked it (its size and head, the witnesses that
// confirmed it and when, when it was checked) and the witness policy, which
// the user can change (witness keys and how many must confirm) or reset to
// the built-in default. The state comes from the background (log-status.ts).
import { t } from '../lib/i18n.js';
import { $, say, sayError } from '../lib/ui.js';
import type { PackageLogStatus } from './messages.js';
import { askPrivate, PROVIDER_CONNECTED } from './options-section.js';

const when = (ms: number): string => new Date(ms).toLocaleString();

function show(s: PackageLogStatus): void {
  const line = $('log-status');
  const h = s.head;
  const n = s.policy.witnesses.length;
  const entries = !h ? '' : t(h.size === 1 ? 'log_entries_one' : 'log_entries_other', h.size);
  // The head's cosigners were those of the policy at the check; count the ones the policy names now.
  const names = new Set(s.policy.witnesses.map((k) => k.split('+')[0]));
  const mine = h ? h.cosigners.filter((c) => names.has(c.name)).length : 0;
  if (!s.provider) say(line, t('log_connect_first'), 'info');
  else if (!h) say(line, t('log_not_checked'), 'info');
  else if (s.policy.quorum === 0) say(line, t('log_checked_no_witnesses', when(h.checkedAt), entries), 'warn');
  else
    say(
      line,
      t(
        mine >= s.policy.quorum ? 'log_checked_confirmed' : 'log_checked_waiting',
        when(h.checkedAt),
        entries,
        mine,
        n,
        s.policy.quorum,
      ),
      mine >= s.policy.quorum ? 'ok' : 'warn',
    );
  const list = $('log-witnesses');
  list.replaceChildren(
    ...(h?.cosigners ?? []).map((c) => {
      const li = document.createElement('li');
      li.textContent = t('log_witness_confirmed', c.name, when(c.time * 1000));
      return li;
    }),
  );
  list.hidden = !h?.cosigners.length;
  const details = $('log-details');
  details.hidden = !h;
  details.querySelector('pre')!.textContent = h
    ? t(
        'log_details',
        h.fingerprint,
        h.logKey,
        t(h.keySource === 'configured' ? 'log_key_configured' : 'log_key_first_use'),
        s.policy.quorum,
        n,
        s.defaultPolicy ? t('log_policy_default') : '',
      )
    : '';
  // The policy fields show the stored policy, unless the user is editing them.
  const form = $<HTMLFormElement>('witness-policy');
  if (form.dataset.edited === 'true') return;
  (form.elements.namedItem('witnesses') as HTMLTextAreaElement).value = s.policy.witnesses.join('\n');
  (form.elements.namedItem('quorum') as HTMLInputElement).value = String(s.policy.quorum);
}

async function change(policy: PackageLogStatus['policy'] | null): Promise<void> {
  const status = $('witness-policy-status');
  try {
    const next = await askPrivate<PackageLogStatus>({ pmfPrivate: 'packageLog', policy });
    $('witness-policy').dataset.edited = 'false';
    show(next);
    say(status, t(policy ? 'log_policy_saved' : 'log_policy_reset'), 'ok');
  } catch (e) {
    sayError(status, e, t('log_policy_not_saved'));
  }
}

export function initPackageLogSection(): void {
  const form = $<HTMLFormElement>('witness-policy');
  form.addEventListener('input', () => (form.dataset.edited = 'true'));
  form.addEventListener('submit', (ev) => {
    ev.preventDefault();
    const text = (form.elements.namedItem('witnesses') as HTMLTextAreaElement).value;
    const witnesses = text
      .split('\n')
      .map((l) => l.trim())
      .filter(Boolean);
    void change({ quorum: Number((form.elements.namedItem('quorum') as HTMLInputElement).value), witnesses });
  });
  $('witness-policy-default').addEventListener('click', () => void change(null));
  const refresh = () =>
    askPrivate<PackageLogStatus>({ pmfPrivate: 'packageLog' }).then(show, (e) => sayError($('log-status'), e));
  document.addEventListener(PROVIDER_CONNECTED, refresh);
  void refresh();
}
