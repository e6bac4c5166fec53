// The search page's scope "All mail" (docs/remote-search.md): the query goes to
// the background, which searches the encrypted index at the provider
// (remote-search.ts); results are rendered as the local ones, without
// snippets (the messages' text is not on this device until one is opened).
import browser from 'webextension-polyfill';
import type { SearchHit } from '../search/mail-search.js';
import { REMOTE_SEARCH_MESSAGE, type RemoteSearchRequest, type RemoteSearchResponse } from './messages.js';
import { renderHit } from '../search/view.js';
import { t } from '../lib/i18n.js';

export type Scope = 'device' | 'all';

/** What the page lends this module to show an answer. */
export interface PageParts {
  results: HTMLElement;
  empty: HTMLElement;
  show(message: string, isError?: boolean, detail?: string): void;
  offerUnlock(locked: boolean): void;
  open?: (hit: SearchHit) => void;
}

/** The scope chosen on the page (radio buttons named "scope"). */
export function chosenScope(): Scope {
  return document.querySelector<HTMLInputElement>('input[name=scope]:checked')?.value === 'all' ? 'all' : 'device';
}

export function chooseScope(scope: Scope): void {
  const radio = document.querySelector<HTMLInputElement>(`input[name=scope][value=${scope}]`);
  if (radio) radio.checked = true;
}

/** Searches all mail; `current()` is false once a newer query replaced this one. */
export async function runAllMail(
  query: string,
  limit: number,
  parts: PageParts,
  current: () => boolean,
): Promise<void> {
  parts.show(t('remote_searching'));
  let answer: RemoteSearchResponse;
  try {
    const request: RemoteSearchRequest = { type: REMOTE_SEARCH_MESSAGE, query, limit };
    answer = (await browser.runtime.sendMessage(request)) as RemoteSearchResponse;
  } catch {
    answer = { ok: false, code: 'unavailable', error: t('search_no_answer') };
  }
  if (!current()) return;
  parts.offerUnlock(answer?.ok === false && answer.code === 'locked');
  if (!answer?.ok) {
    parts.results.replaceChildren();
    parts.empty.hidden = true;
    parts.show(answer?.error ?? t('search_failed'), true, answer?.detail);
    return;
  }
  parts.results.replaceChildren(...answer.hits.map((h) => renderHit(document, h, parts.open)));
  parts.empty.hidden = answer.hits.length > 0;
  parts.empty.textContent = t('search_no_match', query);
  const { total } = answer;
  parts.show(
    answer.hits.length < total
      ? t('remote_matches_newest', answer.hits.length, total)
      : total === 1
        ? t('remote_matches_one')
        : t('remote_matches', total),
  );
}
