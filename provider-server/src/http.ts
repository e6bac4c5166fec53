// HTTP side of the provider: health, Prometheus metrics, model packages and
// topic models' public candidate models (strong ETag = the file's SHA-256,
// Range for resumable downloads, the SHA-256 in X-Content-SHA256 and Repr-Digest), the package log's
// cosigned checkpoint, proofs and entries at well-known URLs, and the demo webmail when it is mounted.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import type http from 'node:http';
import {
  LOG_CHECKPOINT_PATH,
  LOG_FORMAT,
  LOG_KEY_PATH,
  LOG_PATH,
  LOG_PROOF_PATH,
  type PackageLogDocument,
  type PackageLogKey,
  type ProofBundle,
} from '../../protocol/package-log.js';
import type { BlocklistCatalog } from './blocklist.js';
import type { ServedModel } from './crypto.js';
import type { HealthReport } from './health.js';
import type { Metrics } from './metrics.js';

/** What HTTP serves of the package log (package-log.ts's PackageLog). */
export interface ServedLog {
  readonly vkey: string;
  document(): PackageLogDocument;
  bundle(q: { old?: number; modelId?: string; version?: number }): ProofBundle;
  signedCheckpoint(): string;
}

export interface HttpDeps {
  metrics: Metrics;
  /** Every served version of every model (old versions stay downloadable). */
  models(): ServedModel[];
  /** The package transparency log (package-log.ts), served at the LOG_* paths. */
  packageLog?: ServedLog;
  /** Private blocklists: /blocklists lists them, /blocklists/<id>/<v>[/delta] serves their packages. */
  blocklists?: BlocklistCatalog;
  webmail?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean;
  /** The admin endpoints (admin.ts), when admin tokens are configured. */
  admin?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean;
  /** The discovery document and POST /signin (sign-in/), when sign-in is configured. */
  signIn?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean;
  /** POST /webmail/token (webmail-token.ts), when webmail secrets are configured. */
  webmailToken?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean;
  /** The remote search index (remote-index/http.ts). */
  remoteIndex?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean;
  /** What the operator must fix (a demo model served for real, demo-models.ts): shown on /healthz in every state. */
  warnings?: readonly string[];
  /** A user's own tokens: GET /tokens, DELETE /tokens/<id> (token-endpoint.ts). */
  tokens?: (req: http.IncomingMessage, res: http.ServerResponse) => boolean;
  /** The health check (health.ts): /healthz answers 503 while it is failing. Without it, /healthz only says it runs. */
  health?: () => Promise<HealthReport>;
  /** Whether a request may reach the internal endpoints (/metrics, /admin/*); all may without it. */
  internalAllowed?: (req: http.IncomingMessage) => boolean;
}

/** Endpoints for the provider's own operators and monitoring, never for the public. */
export function isInternal(pathname: string): boolean {
  return pathname === '/metrics' || pathname.startsWith('/admin/');
}

/** A JSON answer; `headers` replace the default `cache-control: no-store`. */
export function json(
  res: http.ServerResponse,
  status: number,
  body: unknown,
  headers: http.OutgoingHttpHeaders = { 'cache-control': 'no-store' },
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

function matchesEtag(req: http.IncomingMessage, etag: string): boolean {
  const inm = req.headers['if-none-match'];
  return inm !== undefined && inm.split(',').some((t) => t.trim() === etag || t.trim() === '*');
}

/**
 * The package log's GETs. The whole log changes only with a new version or new
 * cosignatures: revalidated every time, 304 while its checkpoint note is the
 * same. Proofs are per request (?old=M&model=ID&version=V), never cached.
 */
function serveLog(req: http.IncomingMessage, res: http.ServerResponse, url: URL, log: ServedLog): void {
  if (url.pathname === LOG_KEY_PATH) return json(res, 200, { format: LOG_FORMAT, logKey: log.vkey } as PackageLogKey);
  const note = log.signedCheckpoint();
  if (url.pathname === LOG_CHECKPOINT_PATH) {
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store' });
    return void res.end(note);
  }
  if (url.pathname === LOG_PROOF_PATH) {
    const q = url.searchParams;
    const int = (name: string): number | undefined | null => {
      const v = q.get(name);
      if (v === null) return undefined;
      return /^[0-9]{1,15}$/.test(v) ? Number(v) : null;
    };
    const [old, version, modelId] = [int('old'), int('version'), q.get('model') ?? undefined];
    if (old === null || version === null || (modelId !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(modelId)))
      return json(res, 400, {
        error: 'bad_request',
        message: 'old and version must be whole numbers, model a model id',
      });
    return json(res, 200, log.bundle({ old, modelId, version }));
  }
  const headers = {
    etag: `"${createHash('sha256').update(note).digest('hex').slice(0, 32)}"`,
    'cache-control': 'no-cache',
  };
  if (matchesEtag(req, headers.etag)) {
    res.writeHead(304, headers);
    return void res.end();
  }
  json(res, 200, log.document(), headers);
}

const LOG_PATHS = new Set([LOG_PATH, LOG_PROOF_PATH, LOG_CHECKPOINT_PATH, LOG_KEY_PATH]);

/** Parses a single "bytes=a-b" / "bytes=a-" / "bytes=-n" range; null if unsatisfiable, undefined if absent/ignored. */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | null | undefined {
  if (!header) return undefined;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return undefined; // multi-range or garbage: serve the whole body (RFC 9110 allows ignoring)
  let start: number;
  let end: number;
  if (m[1] === '') {
    const suffix = Number(m[2]);
    if (suffix === 0) return null;
    start = Math.max(0, size - suffix);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (!Number.isSafeInteger(start) || start >= size || end < start) return null;
  return { start, end };
}

/** A file of a published model version: its bytes never change, and its SHA-256 is pinned. */
interface ImmutableFile {
  /** Metrics label: the model id, with "/candidates" for a candidate model. */
  label: string;
  file: string;
  sha256: string;
  bytes: number;
}

function serveImmutable(req: http.IncomingMessage, res: http.ServerResponse, f: ImmutableFile, metrics: Metrics): void {
  const etag = `"${f.sha256}"`;
  const size = f.bytes;
  const headers: http.OutgoingHttpHeaders = {
    etag,
    'accept-ranges': 'bytes',
    'content-type': 'application/octet-stream',
    'cache-control': 'public, max-age=31536000, immutable', // a version's bytes never change
    'x-content-sha256': f.sha256,
    'repr-digest': `sha-256=:${Buffer.from(f.sha256, 'hex').toString('base64')}:`,
  };
  if (matchesEtag(req, etag)) {
    res.writeHead(304, headers);
    metrics.modelDownloads.inc({ model: f.label, status: '304' });
    return void res.end();
  }
  // If-Range: only honour the range when the client still holds this exact version.
  const ifRange = req.headers['if-range'];
  const range = ifRange === undefined || ifRange === etag ? parseRange(req.headers.range, size) : undefined;
  if (range === null) {
    res.writeHead(416, { ...headers, 'content-range': `bytes */${size}` });
    metrics.modelDownloads.inc({ model: f.label, status: '416' });
    return void res.end();
  }
  const start = range?.start ?? 0;
  const end = range?.end ?? size - 1;
  const status = range ? 206 : 200;
  res.writeHead(status, {
    ...headers,
    'content-length': end - start + 1,
    ...(range ? { 'content-range': `bytes ${start}-${end}/${size}` } : {}),
  });
  metrics.modelDownloads.inc({ model: f.label, status: String(status) });
  if (req.method === 'HEAD') return void res.end();
  const stream = fs.createReadStream(f.file, { start, end });
  stream.on('error', () => res.destroy());
  stream.pipe(res);
}

/** The blocklist listing (current versions, with the delta from the version before) and their files. */
function serveBlocklists(req: http.IncomingMessage, res: http.ServerResponse, url: URL, deps: HttpDeps): void {
  const lists = deps.blocklists!;
  if (url.pathname === '/blocklists') {
    return json(res, 200, {
      blocklists: lists.all().map((l) => ({
        id: l.id,
        version: l.version,
        entries: l.entries,
        sha256: l.package.sha256,
        bytes: l.package.bytes,
        url: `/blocklists/${l.id}/${l.version}`,
        ...(l.delta && {
          delta: {
            from: l.delta.from,
            sha256: l.delta.sha256,
            bytes: l.delta.bytes,
            url: `/blocklists/${l.id}/${l.version}/delta`,
          },
        }),
      })),
    });
  }
  const m = /^\/blocklists\/([A-Za-z0-9._-]{1,64})\/([0-9]{1,9})(\/delta)?$/.exec(url.pathname);
  const list = m && lists.version(m[1], Number(m[2]));
  const file = m?.[3] ? list?.delta : list?.package;
  if (!list || !file) return json(res, 404, { error: 'not found' });
  serveImmutable(req, res, { label: `blocklist/${list.id}${m[3] ?? ''}`, ...file }, deps.metrics);
}

export function createHttpHandler(deps: HttpDeps): http.RequestListener {
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (isInternal(url.pathname) && deps.internalAllowed && !deps.internalAllowed(req)) {
      deps.metrics.internalRefused.inc();
      return json(res, 403, { error: 'internal endpoint: reachable from internalAllowlist only' });
    }
    if (
      deps.webmail?.(req, res) ||
      deps.admin?.(req, res) ||
      deps.webmailToken?.(req, res) ||
      deps.tokens?.(req, res) ||
      deps.signIn?.(req, res)
    )
      return;
    if (deps.remoteIndex?.(req, res)) return;
    if (req.method !== 'GET' && req.method !== 'HEAD') return json(res, 405, { error: 'method not allowed' });
    if (url.pathname === '/healthz') {
      const models = deps.models().map((m) => ({ id: m.id, version: m.version }));
      const warnings = deps.warnings?.length ? { warnings: deps.warnings } : {};
      if (!deps.health) return json(res, 200, { status: 'ok', models, ...warnings });
      deps.health().then((h) => json(res, h.status === 'failing' ? 503 : 200, { ...h, models, ...warnings }));
      return;
    }
    if (url.pathname === '/metrics') {
      deps.metrics.registry.metrics().then(
        (text) => {
          res.writeHead(200, { 'content-type': deps.metrics.registry.contentType });
          res.end(text);
        },
        () => json(res, 500, { error: 'metrics unavailable' }),
      );
      return;
    }
    if (url.pathname === '/models') {
      const latest = new Map<string, ServedModel>();
      for (const m of deps.models()) if ((latest.get(m.id)?.version ?? 0) < m.version) latest.set(m.id, m);
      return json(res, 200, {
        models: [...latest.values()].map((m) => ({
          id: m.id,
          version: m.version,
          sha256: m.packageSha256,
          bytes: m.packageBytes,
          url: `/models/${m.id}/${m.version}`,
          ...(m.topics
            ? {
                candidates: {
                  sha256: m.topics.candidatesSha256,
                  bytes: m.topics.candidatesBytes,
                  url: `/models/${m.id}/${m.version}/candidates`,
                },
              }
            : {}),
        })),
      });
    }
    if (deps.packageLog && LOG_PATHS.has(url.pathname)) return serveLog(req, res, url, deps.packageLog);
    if (deps.blocklists && url.pathname.startsWith('/blocklists')) return serveBlocklists(req, res, url, deps);
    const m = /^\/models\/([A-Za-z0-9._-]{1,64})\/([0-9]{1,9})(\/candidates)?$/.exec(url.pathname);
    const model = m && deps.models().find((x) => x.id === m[1] && x.version === Number(m[2]));
    if (model && !m[3]) {
      const pkg = { label: model.id, file: model.packageFile, sha256: model.packageSha256, bytes: model.packageBytes };
      return serveImmutable(req, res, pkg, deps.metrics);
    }
    if (model?.topics && m?.[3]) {
      const t = model.topics;
      const cand = {
        label: `${model.id}/candidates`,
        file: t.candidatesFile,
        sha256: t.candidatesSha256,
        bytes: t.candidatesBytes,
      };
      return serveImmutable(req, res, cand, deps.metrics);
    }
    json(res, 404, { error: 'not found' });
  };
}
