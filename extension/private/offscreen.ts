// Chromium's offscreen document (reason WORKERS): starts the WASM workers
// the service worker cannot (POOL_SIZE of them), and relays envelopes
// between them over one runtime port, each tagged with its worker's index.
// It holds no state of its own; the workers keep running while the service
// worker restarts, and their verdicts are already in IndexedDB.
import browser, { type Runtime } from 'webextension-polyfill';
import {
  directWorkerLink,
  OFFSCREEN_PORT,
  OFFSCREEN_RECONNECT,
  POOL_SIZE,
  type PooledEnvelope,
} from './worker-host.js';

const workers = Array.from({ length: POOL_SIZE }, directWorkerLink);
let port: Runtime.Port | undefined;

function connect(): void {
  port?.disconnect();
  const p = browser.runtime.connect({ name: OFFSCREEN_PORT });
  p.onMessage.addListener((m: unknown) => {
    const { worker, envelope } = m as PooledEnvelope;
    workers[worker]?.post(envelope);
  });
  p.onDisconnect.addListener(() => {
    if (port === p) port = undefined;
  });
  port = p;
}

workers.forEach((w, worker) =>
  w.onMessage((envelope) => port?.postMessage({ worker, envelope } satisfies PooledEnvelope)),
);
browser.runtime.onMessage.addListener((msg: unknown) => {
  if ((msg as { pmfOffscreen?: string } | null)?.pmfOffscreen === OFFSCREEN_RECONNECT.pmfOffscreen) connect();
  return undefined;
});
connect();
