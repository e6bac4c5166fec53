// The background's handle on the WASM worker. Firefox and Thunderbird run
// the background as a page, which can start a dedicated Worker itself.
// Chromium's MV3 service worker cannot (no Worker constructor there), so it
// opens an offscreen document (reason WORKERS) that starts the worker and
// relays envelopes over a runtime port (offscreen.ts). Either way there are
// poolSize(cores) workers and the background sees one typed call()
// (worker-pool.ts over worker-client.ts).
import browser, { type Runtime } from 'webextension-polyfill';
import { KeepAwake } from '../lib/keep-awake.js';
import { WorkerClient, type WorkerLink } from './worker-client.js';
import { poolSize, WorkerPool } from './worker-pool.js';
import type { WorkerEnvelope } from './worker-protocol.js';

export const OFFSCREEN_PORT = 'pmf-private-worker';
export const OFFSCREEN_RECONNECT = { pmfOffscreen: 'reconnect' } as const;
const OFFSCREEN_PAGE = 'offscreen.html';

/** Workers for this device (the background and the offscreen document agree: same device). */
export const POOL_SIZE = poolSize(globalThis.navigator?.hardwareConcurrency);

/** An envelope over the offscreen port, for the worker of that index. */
export interface PooledEnvelope {
  worker: number;
  envelope: WorkerEnvelope;
}

/** A dedicated worker started from this page (Firefox/Thunderbird background, offscreen document). */
export function directWorkerLink(): WorkerLink {
  const worker = new Worker(/* webpackChunkName: "core-worker" */ new URL('../worker/core-worker.ts', import.meta.url));
  return {
    post: (msg) => worker.postMessage(msg),
    onMessage: (cb) => worker.addEventListener('message', (ev: MessageEvent) => cb(ev.data as WorkerEnvelope)),
    onClose: (cb) => worker.addEventListener('error', () => cb()),
  };
}

/** The subset of chrome.offscreen / chrome.runtime used here (not in webextension-polyfill's types). */
interface ChromeOffscreen {
  offscreen: {
    createDocument(p: { url: string; reasons: string[]; justification: string }): Promise<void>;
    closeDocument(): Promise<void>;
  };
  runtime: { getContexts(f: { contextTypes: string[] }): Promise<unknown[]> };
}

function waitForPort(timeoutMs: number): Promise<Runtime.Port> {
  return new Promise((resolve, reject) => {
    const page = browser.runtime.getURL(OFFSCREEN_PAGE);
    const listener = (port: Runtime.Port) => {
      if (port.name !== OFFSCREEN_PORT || port.sender?.url !== page) return;
      clearTimeout(timer);
      browser.runtime.onConnect.removeListener(listener);
      resolve(port);
    };
    const timer = setTimeout(() => {
      browser.runtime.onConnect.removeListener(listener);
      reject(new Error('the offscreen document did not connect'));
    }, timeoutMs);
    browser.runtime.onConnect.addListener(listener);
  });
}

/**
 * Chromium: the offscreen document's port. A restarted service worker finds
 * the document still open (its worker may be mid-batch) and asks it to
 * reconnect; a document that does not answer is replaced.
 */
export async function offscreenWorkerLinks(): Promise<WorkerLink[]> {
  const chrome = (globalThis as unknown as { chrome: ChromeOffscreen }).chrome;
  const exists = (await chrome.runtime.getContexts({ contextTypes: ['OFFSCREEN_DOCUMENT'] })).length > 0;
  let port: Runtime.Port | undefined;
  if (exists) {
    const waiting = waitForPort(2000);
    await browser.runtime.sendMessage(OFFSCREEN_RECONNECT).catch(() => {});
    port = await waiting.catch(() => undefined);
    if (!port) await chrome.offscreen.closeDocument();
  }
  if (!port) {
    const waiting = waitForPort(10_000);
    await chrome.offscreen.createDocument({
      url: OFFSCREEN_PAGE,
      reasons: ['WORKERS'],
      justification: 'Runs the WASM worker that checks decrypted mail for spam privately.',
    });
    port = await waiting;
  }
  const p = port;
  return Array.from({ length: POOL_SIZE }, (_, worker) => ({
    post: (envelope) => p.postMessage({ worker, envelope } satisfies PooledEnvelope),
    onMessage: (cb) =>
      p.onMessage.addListener((m: unknown) => {
        if ((m as PooledEnvelope).worker === worker) cb((m as PooledEnvelope).envelope);
      }),
    onClose: (cb) => p.onDisconnect.addListener(() => cb()),
  }));
}

/**
 * Firefox and Thunderbird stop an event page after 30 s without extension
 * activity, and its workers with it, mid-run: a run waiting for the
 * provider's rate (client/core/pacer.ts, a rate_limited answer) is silent
 * for up to a minute. So every pool call keeps the page awake while it
 * runs and its worker reports progress; an idle page is still stopped.
 * Chromium's offscreen workers outlive their service worker, which
 * reconnects to them.
 */
const keepPageAwake = new KeepAwake(() => browser.runtime.getPlatformInfo());

let client: Promise<WorkerPool> | undefined;

/** The background's workers, started on first use and again after one stopped. */
export function privateWorker(): Promise<WorkerPool> {
  const page = typeof Worker === 'function';
  client ??= (
    page ? Promise.resolve(Array.from({ length: POOL_SIZE }, directWorkerLink)) : offscreenWorkerLinks()
  ).then(
    (links) => {
      for (const link of links) link.onClose(() => (client = undefined));
      return new WorkerPool(
        links.map((link) => new WorkerClient(link)),
        page ? keepPageAwake : undefined,
      );
    },
    (e: unknown) => {
      client = undefined;
      throw e;
    },
  );
  return client;
}
