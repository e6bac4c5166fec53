// The provider-server process: one HTTP(S) server carrying the HTTP routes
// and, on /session, the WebSocket session protocol. TLS when configured;
// otherwise plain, which config.ts allows on loopback only.
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { WebSocketServer, type WebSocket } from 'ws';
import type { PackageLogDocument } from '../../protocol/package-log.js';
import type { ServerConfig } from './config.js';
import type { ProviderCrypto, ServedModel } from './crypto.js';
import { AddressLimiter } from './address-limiter.js';
import { createHttpHandler } from './http.js';
import { createMetrics, type Metrics } from './metrics.js';
import { Session } from './session.js';
import type { Store } from './store.js';
import { createWebmailHandler } from './webmail/index.js';

export const SESSION_PATH = '/session';

export interface ModelCatalog {
  current(id: string): ServedModel | undefined;
  all(): ServedModel[];
}

export interface ServerOptions {
  config: ServerConfig;
  store: Store;
  crypto: ProviderCrypto;
  models: ModelCatalog;
  /** The signed package transparency log, served at its well-known URL. */
  packageLog?: () => PackageLogDocument;
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

export async function startServer(opts: ServerOptions): Promise<RunningServer> {
  const { config, store, crypto, models } = opts;
  const log = opts.log ?? ((line: string) => console.error(`[provider] ${line}`));
  const metrics = createMetrics();
  const webmail = createWebmailHandler({
    authenticate: (token) => {
      const id = store.authenticate(token);
      return id === undefined ? undefined : String(id);
    },
    listMessages: (userId, folder) => store.listMessages(Number(userId), folder),
    getMessage: (userId, id) => store.getMessage(Number(userId), id),
    moveMessage: (userId, id, folder) => store.moveMessage(Number(userId), id, folder),
    issueToken: (userId) => store.issueToken(Number(userId)),
  });
  const handler = createHttpHandler({ metrics, models: () => models.all(), packageLog: opts.packageLog, webmail });
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
  const addresses = new AddressLimiter(config.limits.connectionsPerMinutePerAddress);
  server.on('upgrade', (req, socket, head) => {
    const path = new URL(req.url ?? '/', 'http://localhost').pathname;
    const status =
      path !== SESSION_PATH
        ? '404 Not Found'
        : !addresses.take(req.socket.remoteAddress ?? '')
          ? '429 Too Many Requests'
          : sessions.size >= config.limits.maxSessions
            ? '503 Service Unavailable'
            : undefined;
    if (status) {
      socket.end(`HTTP/1.1 ${status}\r\nconnection: close\r\n\r\n`);
      return;
    }
    wss.handleUpgrade(req, socket, head, (ws) => attach(ws));
  });

  function attach(ws: WebSocket): void {
    const session = new Session(
      {
        store,
        crypto,
        metrics,
        currentModel: (id) => models.current(id),
        limits: config.limits,
        log,
      },
      (frame) => {
        if (ws.readyState === ws.OPEN) ws.send(frame);
      },
      (code, reason) => ws.close(code, reason),
    );
    sessions.add(session);
    metrics.sessionsActive.inc();
    metrics.sessionsTotal.inc();
    let idle = setTimeout(() => ws.close(1001, 'idle'), config.limits.idleTimeoutMs);
    ws.on('message', (data, isBinary) => {
      clearTimeout(idle);
      idle = setTimeout(() => ws.close(1001, 'idle'), config.limits.idleTimeoutMs);
      const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data as ArrayBuffer);
      void session.receive(
        isBinary ? new Uint8Array(buf.buffer, buf.byteOffset, buf.byteLength) : buf.toString('utf8'),
      );
    });
    ws.on('close', () => {
      clearTimeout(idle);
      sessions.delete(session);
      metrics.sessionsActive.dec();
      void session.end();
    });
    ws.on('error', () => ws.terminate());
  }

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
