// HTTP calls to the provider's /remote-index endpoints (docs/remote-search.md#wire),
// with the account's bearer token. Bodies are protocol/remote-search.ts's
// layouts; every answer is decoded with its bounds. Failures are
// RemoteIndexError with a code a caller can act on.
import {
  decodeRecords,
  decodeSearchAnswer,
  decodeState,
  encodeCompact,
  encodeUpdate,
  REMOTE_INDEX_PATH,
  REQUEST_LIMITS,
  TAG_BYTES,
  type CompactBody,
  type SearchAnswer,
  type StateBody,
  type UpdateBody,
} from '../../../protocol/remote-search.js';

export type RemoteIndexErrorCode =
  | 'unauthenticated' // the token is not (or no longer) valid
  | 'rate_limited' // too many requests this minute: retry later
  | 'quota' // the account's index is full
  | 'conflict' // another device committed first: sync and retry
  | 'duplicate' // some messages are indexed already (duplicates)
  | 'compact_first' // too many deltas since the snapshot: compact, then retry
  | 'exists' // the search key is set already
  | 'not_found' // no search key is set yet
  | 'bad_request' // the provider refused the request's format
  | 'unavailable'; // the provider could not be reached or failed

export class RemoteIndexError extends Error {
  override name = 'RemoteIndexError';
  constructor(
    readonly code: RemoteIndexErrorCode,
    message: string,
    /**
     * conflict: the provider's version; duplicate: the tags already indexed (hex);
     * transient: no answer came, or the provider failed (5xx), so the same request may succeed again.
     */
    readonly detail: { version?: number; duplicates?: string[]; retryAfterS?: number; transient?: boolean } = {},
  ) {
    super(message);
  }
}

export interface ApiOptions {
  /** The provider's base URL (https://, or http:// on loopback). */
  baseUrl: string;
  token: string;
  fetch?: typeof fetch;
}

const STATUS: Record<number, RemoteIndexErrorCode> = {
  400: 'bad_request',
  401: 'unauthenticated',
  404: 'not_found',
  409: 'conflict',
  413: 'quota',
  429: 'rate_limited',
};

/** Bytes moved, for the bench and the CLI's summary. */
export interface Traffic {
  sent: number;
  received: number;
}

export class RemoteIndexApi {
  readonly traffic: Traffic = { sent: 0, received: 0 };
  private readonly fetch: typeof fetch;

  constructor(private readonly opts: ApiOptions) {
    this.fetch = opts.fetch ?? ((...a) => fetch(...a));
  }

  /**
   * One request. `patient` (the writes and what they need, which run in the
   * background): a 429 is waited out (its Retry-After, at most a minute) and
   * a request that did not reach the provider, got no answer or a 5xx is sent
   * again after a second or two, twice at most; a search fails at once
   * instead, and so does any request whose answer was refused (too large).
   * Sending a write again is safe: an update the provider committed but
   * whose answer was lost comes back as a conflict, and the device then
   * finds its messages indexed.
   */
  private async call(method: string, path: string, body?: Uint8Array, patient = false): Promise<Uint8Array> {
    for (let tried = 1; ; tried++) {
      try {
        return await this.once(method, path, body);
      } catch (e) {
        if (!patient || tried > 2 || !(e instanceof RemoteIndexError)) throw e;
        const wait = e.code === 'rate_limited' ? e.detail.retryAfterS : e.detail.transient ? tried : undefined;
        if (wait === undefined || wait > 60) throw e;
        await new Promise((r) => setTimeout(r, wait * 1000));
      }
    }
  }

  private async once(method: string, path: string, body?: Uint8Array): Promise<Uint8Array> {
    let res: Response;
    try {
      res = await this.fetch(new URL(`${REMOTE_INDEX_PATH}${path}`, this.opts.baseUrl), {
        method,
        headers: { authorization: `Bearer ${this.opts.token}`, 'content-type': 'application/octet-stream' },
        body: body as NonNullable<Parameters<typeof fetch>[1]>['body'],
      });
    } catch (e) {
      // fetch's own message is generic ("fetch failed"); the cause names the failure.
      const cause = (e as { cause?: { code?: string; message?: string } }).cause;
      const why = [(e as Error).message, cause?.code ?? cause?.message].filter(Boolean).join(': ');
      throw new RemoteIndexError('unavailable', `the provider could not be reached (${why})`, { transient: true });
    }
    this.traffic.sent += body?.length ?? 0;
    const bytes = await readCapped(res, MAX_ANSWER_BYTES);
    this.traffic.received += bytes.length;
    if (res.ok) return bytes;
    let info: { error?: string; message?: string; version?: number; duplicates?: string[] } = {};
    try {
      info = JSON.parse(new TextDecoder().decode(bytes)) as typeof info;
    } catch {
      // not JSON: the status says enough
    }
    const code = (info.error as RemoteIndexErrorCode | undefined) ?? STATUS[res.status] ?? 'unavailable';
    const retry = Number(res.headers.get('retry-after'));
    throw new RemoteIndexError(code, info.message ?? `the provider answered ${res.status}`, {
      version: info.version,
      duplicates: info.duplicates,
      retryAfterS: Number.isFinite(retry) && retry > 0 ? retry : undefined,
      transient: res.status >= 500,
    });
  }

  /** Deltas after `since` and, when the snapshot is newer (or buckets are named), its buckets. */
  async state(since: number, buckets?: number[]): Promise<StateBody> {
    const q = new URLSearchParams({ since: String(since) });
    if (buckets) q.set('buckets', buckets.join(','));
    return decodeState(await this.call('GET', `/state?${q}`, undefined, true));
  }

  /** Commits baseVersion + 1; `compact`: the provider asks for a new snapshot. */
  async update(u: UpdateBody): Promise<{ version: number; compact: boolean }> {
    return json(await this.call('POST', '/update', encodeUpdate(u), true));
  }

  async compact(c: CompactBody): Promise<{ version: number }> {
    return json(await this.call('POST', '/compact', encodeCompact(c), true));
  }

  async search(addrs: Uint8Array): Promise<SearchAnswer> {
    return decodeSearchAnswer(await this.call('POST', '/search', addrs), addrs.length / 16);
  }

  async records(tags: Uint8Array[]): Promise<(Uint8Array | undefined)[]> {
    if (tags.length > REQUEST_LIMITS.recordsPerRequest) throw new RangeError('too many records in one request');
    return decodeRecords(await this.call('POST', '/records', join(tags)), tags.length);
  }

  /** Whether each tag's message is indexed. */
  async has(tags: Uint8Array[]): Promise<boolean[]> {
    const answer = await this.call('POST', '/has', join(tags), true);
    if (answer.length !== tags.length)
      throw new RemoteIndexError('unavailable', 'the provider answered has() with the wrong length');
    return [...answer].map((b) => b === 1);
  }

  async remove(tags: Uint8Array[]): Promise<number> {
    return json<{ deleted: number }>(await this.call('POST', '/delete', join(tags))).deleted;
  }

  /** The wrapped search key, or undefined when none is set. */
  async getKey(): Promise<Uint8Array | undefined> {
    try {
      return await this.call('GET', '/key');
    } catch (e) {
      if (e instanceof RemoteIndexError && e.code === 'not_found') return undefined;
      throw e;
    }
  }

  /** Sets the wrapped search key once; 'exists' when another device set one first. */
  async putKey(wrapped: Uint8Array): Promise<'created' | 'exists'> {
    try {
      await this.call('PUT', '/key', wrapped);
      return 'created';
    } catch (e) {
      if (e instanceof RemoteIndexError && e.code === 'exists') return 'exists';
      throw e;
    }
  }

  /** Deletes everything of this account's index at the provider, the wrapped key too. */
  async deleteAll(): Promise<void> {
    await this.call('DELETE', '');
  }
}

/**
 * The largest answer read: a full state (a snapshot and the deltas the
 * provider's quota allows since it) or a search of the most addresses fit
 * well within it; a provider sending more is refused, not buffered.
 */
const MAX_ANSWER_BYTES = 64 << 20;

async function readCapped(res: Response, max: number): Promise<Uint8Array> {
  const tooLarge = () => new RemoteIndexError('unavailable', `the provider's answer exceeds ${max} bytes`);
  if (Number(res.headers.get('content-length')) > max) {
    await res.body?.cancel();
    throw tooLarge();
  }
  if (!res.body) return new Uint8Array(0);
  const reader = res.body.getReader();
  const parts: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.length;
    if (size > max) {
      await reader.cancel();
      throw tooLarge();
    }
    parts.push(value);
  }
  const out = new Uint8Array(size);
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

function json<T>(b: Uint8Array): T {
  return JSON.parse(new TextDecoder().decode(b)) as T;
}

function join(tags: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(tags.length * TAG_BYTES);
  tags.forEach((t, i) => out.set(t, i * TAG_BYTES));
  return out;
}
