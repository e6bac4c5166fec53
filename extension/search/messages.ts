// The runtime-message contract between the search page and the extension
// context that holds the unlocked index (the background). The page cannot
// open the index itself: the key lives only in the background's memory.
import { MailSearchError } from './errors.js';
import type { MailSearch, SearchHit, SearchOptions } from './mail-search.js';
import { t } from '../lib/i18n.js';

export const SEARCH_MESSAGE = 'pmf-search';

export interface SearchRequest extends SearchOptions {
  type: typeof SEARCH_MESSAGE;
  query: string;
}

export type SearchResponse =
  /** complete: false while the index is still being opened (ask again for the rest). */
  { ok: true; hits: SearchHit[]; total: number; complete: boolean } | { ok: false; code: string; error: string };

export function isSearchRequest(msg: unknown): msg is SearchRequest {
  const m = msg as SearchRequest | null;
  return typeof m === 'object' && m !== null && m.type === SEARCH_MESSAGE && typeof m.query === 'string';
}

/**
 * Answers one search request. `search` is null while the user's key is
 * locked; the answer then says so instead of failing.
 */
export async function answerSearchRequest(req: SearchRequest, search: MailSearch | null): Promise<SearchResponse> {
  if (!search) return { ok: false, code: 'locked', error: t('search_locked') };
  try {
    const { limit = 50, sort, after, before, snippets } = req;
    const [{ hits, complete }, total] = await Promise.all([
      search.searchSoon(req.query, { limit, sort, after, before, snippets }),
      search.count(),
    ]);
    return { ok: true, hits, total, complete };
  } catch (err) {
    if (err instanceof MailSearchError) return { ok: false, code: err.code, error: err.message };
    return { ok: false, code: 'internal', error: t('search_unexpected') };
  }
}
