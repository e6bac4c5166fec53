// Small DOM helpers shared by the extension's pages.
import { toPlain } from './plain-error.js';
import { t } from './i18n.js';

export function $<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (!el) throw new Error(`page is missing #${id}`);
  return el as T;
}

/** Shows a message in a status element; kind drives its colour. */
export function say(el: HTMLElement, text: string, kind: 'ok' | 'warn' | 'error' | 'info' = 'info'): void {
  el.textContent = text;
  el.dataset.kind = kind;
  el.hidden = false;
}

/** Shows an error in plain words, technical details folded away; prefix says what failed. */
export function sayError(el: HTMLElement, e: unknown, prefix = ''): void {
  const { message, detail } = toPlain(e);
  say(el, prefix + message, 'error');
  if (!detail) return;
  const details = document.createElement('details');
  const summary = document.createElement('summary');
  summary.textContent = t('technical_details');
  const code = document.createElement('code');
  code.textContent = detail;
  details.append(summary, code);
  el.append(details);
}

export { formatFingerprint } from './fingerprint.js';

export function formatTime(epochMs: number): string {
  return new Date(epochMs).toLocaleTimeString();
}

/** A size as people read it: "512 bytes", "48 KB", "10.5 MB". */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return t('size_bytes', bytes);
  if (bytes < 1024 * 1024) return t('size_kb', Math.round(bytes / 1024));
  const mb = Math.round(bytes / ((1024 * 1024) / 10)) / 10;
  return t('size_mb', mb.toLocaleString(t('lang'), { useGrouping: false }));
}

/**
 * Moves a progress bar and puts where it stands in words (aria-valuetext), which screen readers read
 * instead of a bare percentage.
 */
export function showProgress(bar: HTMLProgressElement, value: number, max: number, words: string): void {
  bar.max = max;
  bar.value = value;
  bar.setAttribute('aria-valuetext', words);
}
