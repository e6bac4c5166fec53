// The `ext` bench's page script in Debian Chromium (bundled by
// bench/suites/ext.ts with esbuild): a mailbox's backlog through the
// extension's own worker pool (extension/private/worker-pool.ts), sized to
// this device, each worker the bench worker bundle serving the extension's
// worker protocol (bench/ext-worker.ts), as the offscreen document does.
import { PrivateStore } from '../extension/private/store.js';
import { WorkerClient } from '../extension/private/worker-client.js';
import { poolSize, WorkerPool } from '../extension/private/worker-pool.js';
import type { ClassifyItem, WorkerEnvelope, WorkerEvent } from '../extension/private/worker-protocol.js';

export interface BacklogRun {
  ms: number;
  workers: number;
  verdicts: number;
  links: number;
  topics: number;
  /** Messages found not spam: each should have its topic shared (unless a link check sent it to Junk). */
  ham: number;
}

function poolWorker(): WorkerClient {
  const w = new Worker('/worker.js');
  return new WorkerClient({
    post: (m) => w.postMessage(m),
    onMessage: (cb) => w.addEventListener('message', (e: MessageEvent) => cb(e.data as WorkerEnvelope)),
    onClose: (cb) => w.addEventListener('error', () => cb()),
  });
}

async function backlogRun(server: string, token: string, items: ClassifyItem[]): Promise<BacklogRun> {
  // A user who answered "share topics" when connecting (the default is off): the row includes topics.
  const store = await PrivateStore.open();
  await store.setSettings({ topics: true });
  store.close();
  const workers = Array.from({ length: poolSize(navigator.hardwareConcurrency) }, poolWorker);
  const provider = { url: server, token };
  // Each worker opens the spam model once, untimed (a new user's download is the model's own row):
  // all at once, so the download lock (PrivateStore.packages.exclusive) is exercised.
  await Promise.all(workers.map((w) => w.call({ kind: 'prepare', provider })));
  const counts = { verdicts: 0, links: 0, topics: 0, ham: 0 };
  const count = (e: WorkerEvent) => {
    if (e.event === 'outcome' && e.outcome.kind === 'verdict') {
      counts.verdicts++;
      if (!e.outcome.spam) counts.ham++;
    } else if (e.event === 'blocklist') counts.links++;
    else if (e.event === 'topic' && e.topic.kind === 'shared') counts.topics++;
  };
  const t = performance.now();
  await new WorkerPool(workers).call({ kind: 'classify', provider, items }, count);
  return { ms: performance.now() - t, workers: workers.length, ...counts };
}

(globalThis as unknown as { backlogRun: typeof backlogRun }).backlogRun = backlogRun;
