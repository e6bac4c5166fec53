// Public API of the local mail search (see README.md).
export {
  openMailSearch,
  deleteMailSearch,
  MailSearch,
  DEFAULT_DB_NAME,
  SHARD_SIZE,
  MAX_BODY_CHARS,
  QUEUE_CAP,
  FLUSH_DELAY_MS,
  type MailDoc,
  type SearchHit,
  type OpenOptions,
  type SearchOptions,
  type SearchStats,
} from './mail-search.js';
export { MailSearchError, type MailSearchErrorCode } from './errors.js';
export { deriveKeyFromPassphrase, PBKDF2_ITERATIONS } from './crypto.js';
export {
  SEARCH_MESSAGE,
  isSearchRequest,
  answerSearchRequest,
  type SearchRequest,
  type SearchResponse,
} from './messages.js';
export { segments, type Range } from './snippet.js';
