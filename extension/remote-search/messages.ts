// The runtime messages of search of all mail (remote-search.ts) between the
// extension's pages and the background, and its failures in plain words.
import { RemoteIndexError } from '../../client/core/remote-index/api.js';
import { RemoteIndexIntegrityError } from '../../client/core/remote-index/keys.js';
import { RemoteIndexRollbackError } from '../../client/core/remote-index/state.js';
import { SearchKeyError } from '../../client/core/remote-index/wrap.js';
import type { SearchHit } from '../search/mail-search.js';
import { t, type MessageKey } from '../lib/i18n.js';

export const REMOTE_SEARCH_MESSAGE = 'pmf-remote-search';
export const REMOTE_SETTINGS_MESSAGE = 'pmf-remote-search-settings';

export interface RemoteSearchRequest {
  type: typeof REMOTE_SEARCH_MESSAGE;
  query: string;
  limit?: number;
}

/** detail: the technical reason, for the page's "Technical details". */
export type RemoteSearchResponse =
  { ok: true; hits: SearchHit[]; total: number } | { ok: false; code: string; error: string; detail?: string };

/** Turns remote indexing on or off, or deletes the index at the provider; answered with the status. */
export interface RemoteSettingsRequest {
  type: typeof REMOTE_SETTINGS_MESSAGE;
  enabled?: boolean;
  deleteRemote?: boolean;
}

export interface RemoteSearchStatus {
  enabled: boolean;
  connected: boolean;
  /** The last failure to add messages, in plain words. */
  lastError?: string;
}

export function isRemoteSearchRequest(msg: unknown): msg is RemoteSearchRequest {
  const m = msg as RemoteSearchRequest | null;
  return (
    typeof m === 'object' &&
    m !== null &&
    m.type === REMOTE_SEARCH_MESSAGE &&
    typeof m.query === 'string' &&
    m.query.length <= 4096
  );
}

export function isRemoteSettingsRequest(msg: unknown): msg is RemoteSettingsRequest {
  const m = msg as RemoteSettingsRequest | null;
  return (
    typeof m === 'object' &&
    m !== null &&
    m.type === REMOTE_SETTINGS_MESSAGE &&
    (m.enabled === undefined || typeof m.enabled === 'boolean') &&
    (m.deleteRemote === undefined || m.deleteRemote === true)
  );
}

const PLAIN: Record<string, MessageKey> = {
  unauthenticated: 'remote_unauthenticated',
  rate_limited: 'remote_rate_limited',
  quota: 'remote_quota',
  unavailable: 'remote_unavailable',
};

/** A failure of the remote index as the page shows it. */
export function remoteFailure(e: unknown): { ok: false; code: string; error: string; detail?: string } {
  const detail = e instanceof Error ? e.message : String(e);
  if (e instanceof RemoteIndexError)
    return { ok: false, code: e.code, error: t(PLAIN[e.code] ?? PLAIN.unavailable), detail };
  if (e instanceof SearchKeyError)
    return {
      ok: false,
      code: 'search-key',
      error: t('remote_search_key'),
      detail,
    };
  if (e instanceof RemoteIndexIntegrityError || e instanceof RemoteIndexRollbackError)
    return {
      ok: false,
      code: 'integrity',
      error: t('remote_integrity'),
      detail,
    };
  return { ok: false, code: 'internal', error: t('remote_unexpected'), detail };
}
