// How a DisplayedMessageReport looks to the user: shared by the "OpenPGP
// status" popup and the banner in the message pane.
import type { ThunderbirdApi } from './api.js';
import type { DisplayedMessageReport } from './message-report.js';
import { t } from '../lib/i18n.js';

export const PATH_TEXT: Record<DisplayedMessageReport['path'], string> = {
  extension: t('tb_path_extension'),
  thunderbird: t('tb_path_thunderbird'),
  plain: '',
  none: '',
};

/**
 * Never green for a block that is only part of the message. Green when readable with a verified
 * signature by the key of the From address, red for a bad signature or failure, amber for
 * readable without a checked signature (Thunderbird's path never has one) and what the user can fix.
 */
export function tone(r: DisplayedMessageReport): 'ok' | 'warn' | 'error' | 'info' {
  const sig = r.result?.signature.status;
  if (r.path === 'plain') return 'info';
  if (r.damaged) return 'error';
  if (r.path === 'thunderbird' || (r.partial && sig !== 'invalid')) return 'warn';
  if (sig === 'invalid') return 'error';
  if (sig === 'valid') return r.result?.signature.fromMatches === false ? 'warn' : 'ok';
  if (r.path === 'extension') return 'warn';
  return r.result?.status === 'locked' || r.result?.status === 'not-for-this-key' ? 'warn' : 'error';
}

const BADGE: Record<ReturnType<typeof tone>, { text: string; color: string | null }> = {
  ok: { text: '✓', color: '#1d6b2c' },
  warn: { text: '!', color: '#b07800' },
  error: { text: '✗', color: '#a00' },
  info: { text: '', color: null },
};

/**
 * The verdict on the toolbar button of the message's tab: the banner sits inside the message,
 * where the mail's own HTML can draw one too; the toolbar is out of its reach. The title (the
 * button's tooltip) is the whole summary.
 */
export async function showOnToolbar(api: ThunderbirdApi, tabId: number, r: DisplayedMessageReport): Promise<void> {
  const { text, color } = BADGE[tone(r)];
  const action = api.messageDisplayAction;
  await action.setBadgeText({ tabId, text });
  await action.setBadgeBackgroundColor({ tabId, color });
  await action.setTitle({ tabId, title: r.path === 'plain' ? null : t('viewer_summary', r.summary) });
}
