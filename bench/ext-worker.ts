// The `ext` bench's code inside a dedicated worker of Debian Chromium
// (bundled by bench/suites/ext.ts with esbuild): the same client work as in
// Node, the model opened from IndexedDB, and a backlog through the
// extension's own worker service (extension/private/worker-service.ts)
// against the provider on loopback. Answers one request per message.
import { ensurePackage } from '../client/core/download.js';
import { loadModel } from '../client/core/provider-session.js';
import { PrivateStore } from '../extension/private/store.js';
import type { WorkerEnvelope, WorkerRequest } from '../extension/private/worker-protocol.js';
import { serveWorker } from '../extension/private/worker-service.js';
import { loadHe } from '../wasm/ts/he.js';
import { clientTimes, type ClientBench } from './ext-client.js';

export type ExtBenchRequest =
  | { task: 'client'; data: string }
  | { task: 'open'; server: string; rounds: number }
  | { task: 'backlog'; server: string; token: string; items: { messageId: string; raw: string }[] }
  /** The worker's WASM heap, bytes (a pool worker's memory beside its JS heap). */
  | { task: 'heap' };

// The pair times the provider's OT work by process CPU time; a worker has only wall time.
(globalThis as { process?: unknown }).process ??= {
  cpuUsage: () => ({ user: performance.now() * 1000, system: 0 }),
};

async function openTimes(server: string, rounds: number): Promise<number[]> {
  const he = await loadHe();
  const store = await PrivateStore.open('pmf-bench-open');
  await ensurePackage({ baseUrl: server, modelId: 'spam', storage: store.packages }); // downloaded once, untimed
  const out: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t = performance.now();
    const loaded = loadModel(he, await ensurePackage({ baseUrl: server, modelId: 'spam', storage: store.packages }));
    out.push(performance.now() - t);
    loaded.model.dispose();
  }
  return out;
}

/** Runs a request through the extension's worker service, as the background does. */
function callService(request: WorkerRequest): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const serve = serveWorker((m: WorkerEnvelope) => {
      if ('done' in m) resolve(m.done);
      else if ('failed' in m) reject(new Error(`${m.failed.code}: ${m.failed.detail}`));
    });
    serve({ id: 1, request });
  });
}

async function backlog(req: Extract<ExtBenchRequest, { task: 'backlog' }>): Promise<{ ms: number }> {
  const provider = { url: req.server, token: req.token };
  await callService({ kind: 'prepare', provider }); // the model download is a one-time cost, untimed
  const t = performance.now();
  await callService({ kind: 'classify', provider, items: req.items });
  return { ms: performance.now() - t };
}

async function run(req: ExtBenchRequest): Promise<unknown> {
  switch (req.task) {
    case 'client':
      return clientTimes(await loadHe(), JSON.parse(req.data) as ClientBench, () => performance.now());
    case 'open':
      return openTimes(req.server, req.rounds);
    case 'backlog':
      return backlog(req);
    case 'heap':
      return (await loadHe()).core.heap.length;
  }
}

// As a worker of the page's pool (bench/ext-page.ts): the extension's worker protocol.
const servePool = serveWorker((m) => self.postMessage(m));

self.onmessage = (ev: MessageEvent<ExtBenchRequest | WorkerEnvelope>) => {
  if ('request' in ev.data) return servePool(ev.data);
  const req = ev.data as ExtBenchRequest;
  void run(req).then(
    (result) => self.postMessage({ result }),
    (e: unknown) => self.postMessage({ error: e instanceof Error ? `${e.message}\n${e.stack}` : String(e) }),
  );
};
