// The search page: a query box and results. It cannot open the encrypted
// index itself (the key lives in the background), so it asks the background
// through a runtime message (messages.ts) and renders the answer.
import browser from 'webextension-polyfill';
import { mountUnlockForm } from '../lib/unlock-form.js';
import { SEARCH_MESSAGE, type SearchRequest, type SearchResponse } from './messages.js';
import { renderHit } from './view.js';

const RESULT_LIMIT = 50;
const TYPING_DELAY_MS = 200;

const form = document.getElementById('search-form') as HTMLFormElement;
const input = document.getElementById('q') as HTMLInputElement;
const status = document.getElementById('search-status')!;
const empty = document.getElementById('search-empty')!;
const results = document.getElementById('results')!;
const unlockPanel = document.getElementById('unlock-panel')!;

/** Only the answer to the latest query is shown (answers may arrive out of order). */
let latest = 0;
let timer: ReturnType<typeof setTimeout> | undefined;

/** While locked, unlock right here; the search runs again after unlocking. */
function offerUnlock(locked: boolean): void {
  if (locked && !unlockPanel.childElementCount) mountUnlockForm(unlockPanel, () => void run(input.value));
  unlockPanel.hidden = !locked;
}

function show(message: string, isError = false): void {
  status.textContent = message;
  status.dataset.kind = isError ? 'error' : 'info';
}

async function run(query: string): Promise<void> {
  const mine = ++latest;
  history.replaceState(null, '', query ? `?q=${encodeURIComponent(query)}` : location.pathname);
  if (!query.trim()) {
    results.replaceChildren();
    empty.hidden = true;
    show('Type words to search your decrypted mail. Searching happens on this device only.');
    return;
  }
  show('Searching…');
  let answer: SearchResponse;
  try {
    const request: SearchRequest = { type: SEARCH_MESSAGE, query, limit: RESULT_LIMIT };
    answer = (await browser.runtime.sendMessage(request)) as SearchResponse;
  } catch {
    answer = { ok: false, code: 'unavailable', error: 'The extension background did not answer; try again.' };
  }
  if (mine !== latest) return;
  offerUnlock(answer?.ok === false && answer.code === 'locked');
  if (!answer?.ok) {
    results.replaceChildren();
    empty.hidden = true;
    show(answer?.error ?? 'Search failed.', true);
    return;
  }
  results.replaceChildren(...answer.hits.map((h) => renderHit(document, h)));
  empty.hidden = answer.hits.length > 0;
  empty.textContent = `No messages match “${query}”.`;
  const shown = answer.hits.length === RESULT_LIMIT ? `the best ${RESULT_LIMIT}` : String(answer.hits.length);
  show(`${shown} of ${answer.total} indexed messages match.`);
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

const initial = new URLSearchParams(location.search).get('q') ?? '';
input.value = initial;
void run(initial);
