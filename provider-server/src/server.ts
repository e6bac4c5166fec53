// The provider-server process: one HTTP(S) server carrying the HTTP routes
// and, on /session, the WebSocket session protocol. TLS when configured;
// otherwise plain, which config.ts allows on loopback only.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { createRequire } from 'node:module';
import os from 'node:os';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import { addressList, clientAddress, listed, originAllowed, overTls, type ServerConfig } from './config.js';
import type { ProviderCrypto } from './crypto.js';
import { nativeSodiumMissing, providerSodiumReady } from './native-sodium.js';
import { ConnectionGate, type Ticket } from './connection-gate.js';
import { createAdminHandler } from './admin.js';
import type { BlocklistCatalog } from './blocklist.js';
import { createHealthCheck } from './health.js';
import { createHttpHandler, type ServedLog } from './http.js';
import { topicNames, type ModelCatalog } from './models.js';
import { createLog } from './log.js';
import { createMetrics, type Metrics } from './metrics.js';
import { demoModelWarnings } from './demo-models.js';
import { SecretGuard } from './secret-guard.js';
import { Session } from './session.js';
import type { Store } from './store.js';
import { lmtpConfig } from './lmtp/config.js';
import { createWebmailHandler } from './webmail/index.js';
import { createWebmailTokenHandler } from './webmail-token.js';
import { createTokenEndpoint } from './token-endpoint.js';
import { signInHandler } from './sign-in/index.js';
import type { TokenKind } from './tokens.js';
import { remoteIndexHandler } from './remote-index/index.js';

export const SESSION_PATH = '/session';

export interface ServerOptions {
  config: ServerConfig;
  store: Store;
  crypto: ProviderCrypto;
  models: ModelCatalog;
  /** The package transparency log, served at its well-known URLs. */
  packageLog?: ServedLog;
  /** Private blocklists: their packages over HTTP, their OPRF in sessions (docs/blocklist.md). */
  blocklists?: BlocklistCatalog;
  /** Where the log's JSON lines go (log.ts); stderr by default. */
  log?: (line: string) => void;
}

export interface RunningServer {
  httpUrl: string;
  wsUrl: string;
  port: number;
  metrics: Metrics;
  /** Open sessions (for tests and graceful shutdown). */
  sessions: Set<Session>;
  close(): Promise<void>;
}

/**
 * Whether ws unmasks client frames with bufferutil's native code, which it
 * loads by that name when installed; its JavaScript fallback cost 13 µs of
 * the event loop per 8.7 KB spam_request, against 0.4 µs.
 */
export function nativeUnmask(): boolean {
  try {
    const { unmask } = createRequire(import.meta.url)('bufferutil') as { unmask: unknown };
    return /\[native code\]/.test(String(unmask));
  } catch {
    return false;
  }
}

/**
 * A frame in a buffer of its own. ws hands out views into the socket's read
 * chunk (up to 64 KB, shared with the frames around it); every byte field of
 * the decoded message is a view into it, and a view posted to a crypto worker
 * is cloned with its whole buffer.
 */
function ownBytes(buf: Buffer): Uint8Array {
  return new Uint8Array(buf.buffer.slice(buf.byteOffset, buf.byteOffset + buf.byteLength));
}

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const { config, store, crypto, models } = opts;
  const log = createLog({ name: 'provider', write: opts.log });
  // blocklist_request elements are checked on this thread (ristretto255)
  if (!(await providerSodiumReady())) log.warn(nativeSodiumMissing());
  if (!nativeUnmask())
    log.warn(
      'bufferutil is not installed or did not load: WebSocket frames are unmasked in JavaScript, more CPU per request (npm ci installs it)',
    );
  const warnings = config.demo ? [] : demoModelWarnings(config.models);
  for (const w of warnings) log.warn(w);
  const metrics = createMetrics({ workers: () => crypto.health(), workerMemory: crypto.memory?.bind(crypto) });
  store.observe((statement, seconds, failed) => {
    metrics.storeSeconds.observe({ statement }, seconds);
    if (failed) metrics.storeErrors.inc({ statement });
  });
  const clientOf = (req: http.IncomingMessage): string =>
    clientAddress(req.socket.remoteAddress ?? '', req.headers['x-forwarded-for'], config.trustedProxies);
  const guard = (hashes: string[]): SecretGuard | undefined =>
    hashes.length === 0
      ? undefined
      : new SecretGuard(
          hashes.map((h) => Buffer.from(h, 'hex')),
          config.limits.authFailuresPerMinute,
          clientOf,
        );
  const internal = addressList(config.internalAllowlist);
  const internalAllowed = (req: http.IncomingMessage): boolean => {
    // Forwarded by a proxy that is not trusted: the real client is unknown.
    const forwarded = req.headers['x-forwarded-for'] !== undefined;
    if (forwarded && !config.trustedProxies.includes(req.socket.remoteAddress ?? '')) return false;
    return listed(internal, clientOf(req));
  };
  // One-click connect (the demo webmail, and a webmail's server through /webmail/token): each token is
  // a store row, bounded like the sessions it opens (hellos per user per minute) and capped per user.
  const tokenPolicy = { lifetimeMs: config.limits.tokenLifetimeMs, perUser: config.limits.tokensPerUser };
  const issueToken = (kind: TokenKind) => async (userId: number) =>
    (await store.takeRate(userId, config.limits.hellosPerMinute, Date.now(), 'hello'))
      ? store.issueToken(userId, kind, tokenPolicy)
      : undefined;
  const webmail = createWebmailHandler(
    {
      authenticate: async (token) => {
        const id = await store.authenticate(token, tokenPolicy);
        return id === undefined ? undefined : String(id);
      },
      listMessages: (userId, folder) => store.listMessages(Number(userId), folder),
      getMessage: (userId, id) => store.getMessage(Number(userId), id),
      moveMessage: (userId, id, folder) => store.moveMessage(Number(userId), id, folder),
      issueToken: (userId) => issueToken('demo')(Number(userId)),
    },
    { secure: (req) => overTls(req, config.trustedProxies) },
  );
  const webmailToken = createWebmailTokenHandler({
    guard: guard(config.webmailSecretSha256),
    userName: lmtpConfig(config.lmtp, {}).userName,
    userId: (name) => store.userId(name),
    issue: issueToken('webmail'),
    log,
    count: (outcome) => metrics.webmailTokens.inc({ outcome }),
  });
  const signIn = signInHandler(config, {
    store,
    issue: async (userId) => {
      const token = await issueToken('signin')(userId);
      return token ? { token, expiresAt: Date.now() + tokenPolicy.lifetimeMs } : undefined;
    },
    log,
    count: (outcome) => metrics.signIns.inc({ outcome }),
  });
  const admin = createAdminHandler({
    guard: guard(config.adminTokenSha256),
    store,
    labels: topicNames(config.dataDir),
    log,
    metrics,
  });
  const handler = createHttpHandler({
    metrics,
    models: () => models.all(),
    packageLog: opts.packageLog,
    blocklists: opts.blocklists,
    webmail,
    admin,
    webmailToken,
    remoteIndex: remoteIndexHandler(store, config.remoteIndex, log),
    signIn,
    warnings,
    tokens: createTokenEndpoint({ tokens: store.tokens, policy: tokenPolicy }),
    health: createHealthCheck({
      store,
      crypto,
      deadlineMs: config.limits.healthTimeoutMs,
      instance: () => `${os.hostname()}:${(server.address() as AddressInfo | null)?.port ?? config.port}`,
    }),
    internalAllowed,
  });
  const server = config.tls
    ? https.createServer(
        { cert: fs.readFileSync(config.tls.certFile), key: fs.readFileSync(config.tls.keyFile) },
        handler,
      )
    : http.createServer(handler);

  // ws closes (1009) frames beyond maxPayload without reading them; below
  // that bound our own codec answers oversized frames with an error frame.
  const wss = new WebSocketServer({ noServer: true, maxPayload: 2 * config.limits.maxFrameBytes });
  const sessions = new Set<Session>();
  const { limits } = config;
  const gate = new ConnectionGate(limits, store.connections);
  const STATUS = {
    403: '403 Forbidden',
    404: '404 Not Found',
    429: '429 Too Many Requests',
    503: '503 Service Unavailable',
  };
  server.on('upgrade', (req, socket, head) => {
    const address = clientOf(req);
    const refuse = (status: keyof typeof STATUS) => {
      metrics.refusedConnections.inc({ status });
      log.failed(`connection_refused_${status}`, `WebSocket connection refused: ${STATUS[status]}`, { address });
      if (!socket.destroyed) socket.end(`HTTP/1.1 ${STATUS[status]}\r\nconnection: close\r\n\r\n`);
    };
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    if (path !== SESSION_PATH) return refuse(404);
    const origin = req.headers.origin;
    if (origin !== undefined && !originAllowed(origin, config.allowedOrigins)) return refuse(403);
    socket.on('error', () => socket.destroy()); // a client gone while the gate decides
    gate.admit(address).then(
      (ticket) => {
        if (typeof ticket === 'number') return refuse(ticket);
        if (socket.destroyed) return ticket.closed();
        wss.handleUpgrade(req, socket, head, (ws) => attach(ws, ticket));
      },
      (e: Error) => {
        log.error(`connection gate failed: ${e.message}`);
        refuse(503);
      },
    );
  });

  function attach(ws: WebSocket, ticket: Ticket): void {
    let authenticated = false;
    const authenticatedNow = () => {
      authenticated = true;
      ticket.authenticated();
    };
    // A newcomer from a network that is not flooding took this waiting socket's place (connection-gate.ts).
    ticket.onEvict = () => {
      metrics.droppedConnections.inc({ reason: 'evicted_waiting_for_hello' });
      ws.close(1008, 'too many connections waiting for hello');
    };
    if (ticket.evicted) ticket.onEvict();
    const session = new Session(
      {
        store,
        crypto,
        metrics,
        currentModel: (id) => models.current(id),
        blocklists: opts.blocklists,
        limits,
        log,
        onReady: authenticatedNow,
      },
      (frame) => {
        if (ws.readyState !== ws.OPEN) return;
        // A client that does not read must not grow our memory: drop it.
        if (ws.bufferedAmount + frame.length > limits.maxSendBufferBytes) {
          metrics.droppedConnections.inc({ reason: 'send_buffer_full' });
          ws.terminate();
          return;
        }
        ws.send(frame);
      },
      (code, reason) => ws.close(code, reason),
    );
    sessions.add(session);
    metrics.sessionsActive.inc();
    metrics.sessionsTotal.inc();
    const helloDeadline = setTimeout(() => {
      if (authenticated) return;
      metrics.droppedConnections.inc({ reason: 'hello_timeout' });
      ws.close(1008, 'no hello in time');
    }, limits.helloTimeoutMs);
    let idle = setTimeout(() => ws.close(1001, 'idle'), limits.idleTimeoutMs);
    // Frames are handled one at a time; past maxPendingFrames we stop reading
    // the socket, so a fast sender is slowed by TCP instead of queued in memory.
    let pending = 0;
    ws.on('message', (data, isBinary) => {
      clearTimeout(idle);
      idle = setTimeout(() => ws.close(1001, 'idle'), limits.idleTimeoutMs);
      const buf = data as Buffer; // ws's default binaryType: one Buffer per message, fragments joined
      if (++pending >= limits.maxPendingFrames) ws.pause();
      void session.receive(isBinary ? ownBytes(buf) : buf.toString('utf8')).finally(() => {
        if (--pending < limits.maxPendingFrames && ws.isPaused) ws.resume();
      });
    });
    ws.on('close', () => {
      clearTimeout(idle);
      clearTimeout(helloDeadline);
      ticket.closed();
      sessions.delete(session);
      metrics.sessionsActive.dec();
      void session.end();
    });
    ws.on('error', () => ws.terminate());
  }

  // Recorded answers nobody acknowledged are dropped after answerRetentionMs, kept message bodies
  // after messageBodyRetentionMs: once at start, then at least hourly. Every instance may run it;
  // the updates are idempotent.
  const prune = (what: string, drop: () => Promise<number>) =>
    drop().then(
      (n) => n > 0 && log(`dropped ${n} ${what}`),
      (e: Error) => log.error(`dropping ${what} failed: ${e.message}`),
    );
  const pruneAll = () =>
    Promise.all([
      prune('recorded answers never acknowledged', () => store.pruneAnswers(Date.now() - limits.answerRetentionMs)),
      prune('kept message bodies past their retention', () =>
        store.pruneBodies(Date.now() - limits.messageBodyRetentionMs),
      ),
      prune('expired tokens', () => store.tokens.prune({ lifetimeMs: limits.tokenLifetimeMs })),
    ]);
  await pruneAll();
  const every = Math.min(3_600_000, limits.answerRetentionMs / 2, limits.messageBodyRetentionMs / 2);
  const pruning = setInterval(pruneAll, every).unref();
  const windows = setInterval(
    () =>
      store.connections.prune().catch((e: Error) => log.error(`dropping past connection windows failed: ${e.message}`)),
    60_000,
  ).unref();

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const scheme = config.tls ? 'https' : 'http';
  return {
    httpUrl: `${scheme}://${host}:${port}`,
    wsUrl: `${config.tls ? 'wss' : 'ws'}://${host}:${port}${SESSION_PATH}`,
    port,
    metrics,
    sessions,
    async close() {
      clearInterval(pruning);
      clearInterval(windows);
      for (const c of wss.clients) c.close(1001, 'server shutting down');
      await Promise.all([...sessions].map((s) => s.end()));
      await new Promise<void>((resolve) => {
        wss.close(() => resolve());
      });
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
