// The remote index's HTTP endpoints (docs/remote-search.md#wire), behind the
// account's bearer token (the same tokens sessions use) and its per-minute
// request window:
//   GET    /remote-index/state?since=V[&buckets=i,j]  → state body
//   POST   /remote-index/update    update body        → {version, compact, collisions}
//   POST   /remote-index/compact   compact body       → {version}
//   POST   /remote-index/search    addresses          → search answer
//   POST   /remote-index/records   tags               → records
//   POST   /remote-index/has       tags               → one byte (0/1) per tag
//   POST   /remote-index/delete    tags               → {deleted}
//   GET|PUT /remote-index/key      wrapped search key (PUT: once; 409 after)
//   DELETE /remote-index                              → the account's whole index
// Errors are JSON {error, message} with the status: 400 malformed, 401 no
// valid token, 404 no key yet, 409 conflict / duplicate / compact_first /
// exists, 413 too large or over quota, 429 rate limited (Retry-After).
// Every body is bounded before it is read and validated before it is used.
import type http from 'node:http';
import {
  ADDR_BYTES,
  BODY_LIMITS,
  BUCKETS,
  decodeCompact,
  decodeUpdate,
  encodeRecords,
  encodeSearchAnswer,
  encodeState,
  items,
  REMOTE_INDEX_PATH,
  RemoteIndexFormatError,
  REQUEST_LIMITS,
  split,
  TAG_BYTES,
} from '../../../protocol/remote-search.js';
import { json } from '../http.js';
import { windowEnd, type Store } from '../store.js';
import type { RemoteIndexLimits } from './limits.js';
import type { Log } from '../log.js';
import type { CommitRefusal, RemoteIndexStore } from './store.js';

export interface RemoteIndexHttpDeps {
  store: Pick<Store, 'authenticate' | 'takeRate'>;
  index: RemoteIndexStore;
  limits: RemoteIndexLimits;
  log: Pick<Log, 'failed'>;
}

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly extra: Record<string, unknown> = {},
    readonly headers: http.OutgoingHttpHeaders = {},
  ) {
    super(message);
  }
}

const sendJson = (res: http.ServerResponse, status: number, body: unknown, headers: http.OutgoingHttpHeaders = {}) =>
  json(res, status, body, { 'cache-control': 'no-store', ...headers });

function sendBytes(res: http.ServerResponse, body: Uint8Array): void {
  res.writeHead(200, {
    'content-type': 'application/octet-stream',
    'content-length': body.length,
    'cache-control': 'no-store',
  });
  res.end(body);
}

/** The body, refused (413) past `max` bytes by its declared length or as it arrives. */
function readBody(req: http.IncomingMessage, max: number): Promise<Uint8Array> {
  const declared = Number(req.headers['content-length'] ?? NaN);
  if (declared > max)
    return Promise.reject(new HttpError(413, 'too_large', `a request body here is at most ${max} bytes`));
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size > max) {
        req.removeAllListeners('data');
        req.resume();
        reject(new HttpError(413, 'too_large', `a request body here is at most ${max} bytes`));
      } else chunks.push(c);
    });
    req.on('end', () => resolve(new Uint8Array(Buffer.concat(chunks))));
    req.on('error', reject);
  });
}

function bearer(req: http.IncomingMessage): string | undefined {
  return /^Bearer ([\x21-\x7e]{1,256})$/.exec(req.headers.authorization ?? '')?.[1];
}

/** `since` and `buckets` of a state request. */
function stateQuery(url: URL): { since: number; buckets?: number[] } {
  const since = Number(url.searchParams.get('since') ?? '0');
  if (!Number.isSafeInteger(since) || since < 0) throw new RemoteIndexFormatError('state: since must be a version');
  const list = url.searchParams.get('buckets');
  if (list === null) return { since };
  const buckets = list === '' ? [] : list.split(',').map(Number);
  if (
    buckets.length > BUCKETS ||
    buckets.some((b) => !Number.isInteger(b) || b < 0 || b >= BUCKETS) ||
    new Set(buckets).size !== buckets.length
  )
    throw new RemoteIndexFormatError(`state: buckets must be distinct integers in 0..${BUCKETS - 1}`);
  return { since, buckets };
}

function refusal(r: CommitRefusal): HttpError {
  switch (r.refused) {
    case 'conflict':
      return new HttpError(409, 'conflict', 'another device committed first: sync and build the update again', {
        version: r.version,
      });
    case 'duplicate':
      return new HttpError(409, 'duplicate', 'some messages are indexed already', {
        duplicates: r.duplicates.map((t) => Buffer.from(t).toString('hex')),
      });
    case 'compact_first':
      return new HttpError(409, 'compact_first', 'too many updates since the last snapshot: compact first');
    case 'quota':
      return new HttpError(413, 'quota', r.message);
  }
}

/** Handles REMOTE_INDEX_PATH and below and returns true; false for every other path. */
export function createRemoteIndexHandler(
  deps: RemoteIndexHttpDeps,
): (req: http.IncomingMessage, res: http.ServerResponse) => boolean {
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== REMOTE_INDEX_PATH && !url.pathname.startsWith(`${REMOTE_INDEX_PATH}/`)) return false;
    route(deps, req, res, url).catch((e: unknown) => {
      if (e instanceof RemoteIndexFormatError) e = new HttpError(400, 'bad_request', e.message);
      if (!(e instanceof HttpError)) {
        // at most one line a minute, however many requests fail this way
        deps.log.failed(
          'remote-index-internal',
          `remote index: ${req.method} ${url.pathname}: internal error: ${(e as Error)?.message ?? e}`,
          { level: 'error' },
        );
        e = new HttpError(500, 'unavailable', 'internal error');
      }
      const h = e as HttpError;
      if (res.headersSent) return void res.end();
      sendJson(res, h.status, { error: h.code, message: h.message, ...h.extra }, { connection: 'close', ...h.headers });
    });
    return true;
  };
}

/**
 * Addresses looked up or entries stored per request unit: a search of 2^18
 * addresses counts as 64 requests, so one account cannot make the provider
 * look up more than about 2.5M addresses a minute at the default rate.
 */
const ENTRIES_PER_UNIT = 4096;

async function route(
  deps: RemoteIndexHttpDeps,
  req: http.IncomingMessage,
  res: http.ServerResponse,
  url: URL,
): Promise<void> {
  const token = bearer(req);
  const userId = token === undefined ? undefined : await deps.store.authenticate(token);
  if (userId === undefined)
    throw new HttpError(
      401,
      'unauthenticated',
      'a valid bearer token is needed',
      {},
      { 'www-authenticate': 'Bearer realm="pmf"' },
    );
  const charge = async (units: number): Promise<void> => {
    if (units > 0 && !(await deps.store.takeRate(userId, deps.limits.requestsPerMinute, Date.now(), 'index', units))) {
      const wait = Math.max(1, Math.ceil((windowEnd('index') - Date.now()) / 1000));
      throw new HttpError(
        429,
        'rate_limited',
        `at most ${deps.limits.requestsPerMinute} search index requests per minute (a large search or update counts as several)`,
        {},
        { 'retry-after': String(wait) },
      );
    }
  };
  await charge(1);
  const { index } = deps;
  const op = `${req.method} ${url.pathname.slice(REMOTE_INDEX_PATH.length) || '/'}`;
  const tags = async (): Promise<Uint8Array[]> => {
    const body = await readBody(req, BODY_LIMITS.tags);
    items(body, TAG_BYTES, REQUEST_LIMITS.tagsPerRequest, 'tags');
    return split(body, TAG_BYTES);
  };
  switch (op) {
    case 'GET /state': {
      const { since, buckets } = stateQuery(url);
      return sendBytes(res, encodeState(await index.state(userId, since, buckets)));
    }
    case 'POST /update': {
      const raw = await readBody(req, BODY_LIMITS.update);
      const u = decodeUpdate(raw);
      await charge(Math.floor(u.docs.reduce((n, d) => n + d.addrs.length / ADDR_BYTES, 0) / ENTRIES_PER_UNIT));
      if (new Set(u.docs.map((d) => Buffer.from(d.tag).toString('hex'))).size !== u.docs.length)
        throw new RemoteIndexFormatError('update: a message appears twice');
      const done = await index.commitUpdate(userId, u, raw);
      if ('refused' in done) throw refusal(done);
      return sendJson(res, 200, done);
    }
    case 'POST /compact': {
      const c = decodeCompact(await readBody(req, BODY_LIMITS.compact));
      const done = await index.commitSnapshot(userId, c.baseVersion, c.buckets);
      if ('refused' in done) throw refusal(done);
      return sendJson(res, 200, done);
    }
    case 'POST /search': {
      const addrs = await readBody(req, BODY_LIMITS.search);
      const n = items(addrs, ADDR_BYTES, REQUEST_LIMITS.searchAddresses, 'search');
      if (n === 0) throw new RemoteIndexFormatError('search: no addresses');
      await charge(Math.floor(n / ENTRIES_PER_UNIT));
      return sendBytes(res, encodeSearchAnswer(await index.search(userId, addrs)));
    }
    case 'POST /records': {
      const asked = await tags();
      if (asked.length > REQUEST_LIMITS.recordsPerRequest)
        throw new RemoteIndexFormatError(`records: at most ${REQUEST_LIMITS.recordsPerRequest} per request`);
      return sendBytes(res, encodeRecords(await index.records(userId, asked)));
    }
    case 'POST /has':
      return sendBytes(
        res,
        Uint8Array.from(await index.has(userId, await tags()), (b) => (b ? 1 : 0)),
      );
    case 'POST /delete': {
      // Its entries were charged when they were added; the bound keeps each statement's work to an update's.
      const removed = await tags();
      if (removed.length > REQUEST_LIMITS.removePerRequest)
        throw new RemoteIndexFormatError(`delete: at most ${REQUEST_LIMITS.removePerRequest} per request`);
      return sendJson(res, 200, { deleted: await index.remove(userId, removed) });
    }
    case 'GET /key': {
      const key = await index.getKey(userId);
      if (!key) throw new HttpError(404, 'not_found', 'no search key is stored for this account yet');
      return sendBytes(res, key);
    }
    case 'PUT /key': {
      const wrapped = await readBody(req, BODY_LIMITS.key);
      if (wrapped.length === 0) throw new RemoteIndexFormatError('key: empty');
      if (!(await index.setKey(userId, wrapped)))
        throw new HttpError(409, 'exists', 'this account has a search key already');
      return sendJson(res, 201, { stored: true });
    }
    case 'DELETE /':
      await index.deleteAll(userId);
      return sendJson(res, 200, { deleted: true });
    default:
      throw new HttpError(404, 'not_found', `no ${op} here`);
  }
}
