// Chromium's offscreen document (reason WORKERS): starts the WASM worker the
// service worker cannot, and relays envelopes between them over a runtime
// port. It holds no state of its own; the worker keeps running while the
// service worker restarts, and its verdicts are already in IndexedDB.
import browser, { type Runtime } from 'webextension-polyfill';
import { directWorkerLink, OFFSCREEN_PORT, OFFSCREEN_RECONNECT } from './worker-host.js';

const worker = directWorkerLink();
let port: Runtime.Port | undefined;

function connect(): void {
  port?.disconnect();
  const p = browser.runtime.connect({ name: OFFSCREEN_PORT });
  p.onMessage.addListener((m: unknown) => worker.post(m as Parameters<typeof worker.post>[0]));
  p.onDisconnect.addListener(() => {
    if (port === p) port = undefined;
  });
  port = p;
}

worker.onMessage((msg) => port?.postMessage(msg));
browser.runtime.onMessage.addListener((msg: unknown) => {
  if ((msg as { pmfOffscreen?: string } | null)?.pmfOffscreen === OFFSCREEN_RECONNECT.pmfOffscreen) connect();
  return undefined;
});
connect();
