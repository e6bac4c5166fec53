// The search page: a query box and results. It cannot open the encrypted
// index itself (the key lives in the background), so it asks the background
// through a runtime message (messages.ts) and renders the answer.
import '../lib/localize-page.js';
import browser from 'webextension-polyfill';
import type { Status } from '../lib/messages.js';
import { ask } from '../lib/rpc.js';
import { mountUnlockForm } from '../lib/unlock-form.js';
import { thunderbird } from '../thunderbird/api.js';
import { messageIdOf, openMessage } from '../thunderbird/open-message.js';
import { SEARCH_MESSAGE, type SearchRequest, type SearchResponse } from './messages.js';
import type { SearchHit } from './mail-search.js';
import { renderHit } from './view.js';
import { chooseScope, chosenScope, runAllMail } from '../remote-search/page.js';
import { t } from '../lib/i18n.js';

const RESULT_LIMIT = 50;
const TYPING_DELAY_MS = 200;
const MORE_RESULTS_DELAY_MS = 150;

const form = document.getElementById('search-form') as HTMLFormElement;
const input = document.getElementById('q') as HTMLInputElement;
const status = document.getElementById('search-status')!;
const empty = document.getElementById('search-empty')!;
const results = document.getElementById('results')!;
const unlockPanel = document.getElementById('unlock-panel')!;
const sort = document.getElementById('sort') as HTMLSelectElement;
const after = document.getElementById('after') as HTMLInputElement;
const before = document.getElementById('before') as HTMLInputElement;
const DAY_MS = 86_400_000;

/** The filters as search options: whole local days, both ends included. */
function filters(): Pick<SearchRequest, 'sort' | 'after' | 'before'> {
  const day = (input: HTMLInputElement) => (input.value ? new Date(`${input.value}T00:00`).getTime() : undefined);
  const to = day(before);
  return {
    sort: sort.value === 'date' ? 'date' : 'relevance',
    after: day(after),
    before: to === undefined ? undefined : to + DAY_MS - 1,
  };
}

/** Only the answer to the latest query is shown (answers may arrive out of order). */
let latest = 0;
let timer: ReturnType<typeof setTimeout> | undefined;

/**
 * Why the index is closed: no key of the add-on's own to open it with
 * (Thunderbird may hold the user's key: its own search covers what it
 * decrypts), or the key is locked (unlock right here; the search runs again).
 */
async function closedIndex(): Promise<string> {
  const keys = await ask<Status>({ type: 'status' }).then(
    (s) => s.privateKeys,
    () => 1,
  );
  if (keys === 0) return tbApi ? t('search_needs_key_thunderbird') : t('search_needs_key');
  offerUnlock(true);
  return t('search_unlock_below');
}

/** The unlock form below the status while the key is locked; the search runs again once unlocked. */
function offerUnlock(locked: boolean): void {
  if (locked && !unlockPanel.childElementCount) mountUnlockForm(unlockPanel, () => void run(input.value));
  unlockPanel.hidden = !locked;
}

function show(message: string, isError = false, detail?: string): void {
  status.textContent = message;
  status.dataset.kind = isError ? 'error' : 'info';
  if (!detail) return;
  const more = document.createElement('details');
  const summary = document.createElement('summary');
  summary.textContent = t('technical_details');
  more.append(summary, detail);
  status.append(more);
}

/** In Thunderbird, a result opens the message in a Thunderbird tab. */
const tbApi = thunderbird();
const openInThunderbird = tbApi
  ? (hit: SearchHit) => {
      const id = messageIdOf(hit.url);
      if (!id) return show(t('search_cannot_open'), true);
      openMessage(tbApi, id).catch((e: Error) => show(e.message, true));
    }
  : undefined;

/**
 * Results come in two answers: first the result lines (from the index in
 * memory), then the same results with snippets (which need each message's
 * stored text decrypted).
 */
async function run(query: string, snippets = false): Promise<void> {
  const mine = snippets ? latest : ++latest;
  const scope = chosenScope();
  // All mail is searched newest first, without date filters.
  document.getElementById('search-filters')!.hidden = scope === 'all';
  const params = new URLSearchParams({ q: query, ...(scope === 'all' && { scope }) });
  history.replaceState(null, '', query ? `?${params}` : location.pathname);
  if (!query.trim()) {
    results.replaceChildren();
    empty.hidden = true;
    show(scope === 'all' ? t('search_type_all') : t('search_type_device'));
    return;
  }
  if (scope === 'all') {
    const parts = { results, empty, show, offerUnlock, open: openInThunderbird };
    return runAllMail(query, RESULT_LIMIT, parts, () => mine === latest);
  }
  if (!snippets) show(t('search_searching'));
  let answer: SearchResponse;
  try {
    const request: SearchRequest = { type: SEARCH_MESSAGE, query, limit: RESULT_LIMIT, snippets, ...filters() };
    answer = (await browser.runtime.sendMessage(request)) as SearchResponse;
  } catch {
    answer = { ok: false, code: 'unavailable', error: t('search_no_answer') };
  }
  if (mine !== latest) return;
  unlockPanel.hidden = true;
  if (!answer?.ok) {
    results.replaceChildren();
    empty.hidden = true;
    const closed = answer?.code === 'locked';
    show(closed ? await closedIndex() : (answer?.error ?? t('search_failed')), !closed);
    return;
  }
  results.replaceChildren(...answer.hits.map((h) => renderHit(document, h, openInThunderbird)));
  empty.hidden = answer.hits.length > 0 || !answer.complete;
  empty.textContent = t('search_no_match', query);
  const shown =
    answer.hits.length < RESULT_LIMIT
      ? String(answer.hits.length)
      : t(sort.value === 'date' ? 'search_newest_n' : 'search_best_n', RESULT_LIMIT);
  if (answer.complete) {
    show(t('search_matches', shown, answer.total));
    if (!snippets && answer.hits.length) void run(query, true);
    return;
  }
  // The index is still opening (newest mail first): show what is found so far, then ask again.
  show(t('search_so_far', shown, answer.total));

  setTimeout(() => mine === latest && void run(query), MORE_RESULTS_DELAY_MS);
}

form.addEventListener('submit', (e) => {
  e.preventDefault();
  clearTimeout(timer);
  void run(input.value);
});
input.addEventListener('input', () => {
  clearTimeout(timer);
  timer = setTimeout(() => void run(input.value), TYPING_DELAY_MS);
});

for (const control of [sort, after, before, ...document.querySelectorAll('input[name=scope]')])
  control.addEventListener('change', () => void run(input.value));

if (new URLSearchParams(location.search).get('scope') === 'all') chooseScope('all');
const initial = new URLSearchParams(location.search).get('q') ?? '';
input.value = initial;
void run(initial);
