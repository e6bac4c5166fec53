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
  /** The largest WASM heap of the pool's workers after the run, bytes. */
  heap: number;
  verdicts: number;
  links: number;
  topics: number;
  /** Topics not shared, by the first line of why (the row must not hide them). */
  topicFailures: Record<string, number>;
  /** Messages found not spam: each should have its topic shared (unless a link check sent it to Junk). */
  ham: number;
}

/** The WASM heap of a pool worker (bench/ext-worker.ts answers bench requests beside the pool's). */
function heapOf(w: Worker): Promise<number> {
  return new Promise((resolve) => {
    const answer = (e: MessageEvent) => {
      if (!('result' in e.data)) return;
      w.removeEventListener('message', answer);
      resolve(e.data.result as number);
    };
    w.addEventListener('message', answer);
    w.postMessage({ task: 'heap' });
  });
}

function poolWorker(w: Worker): WorkerClient {
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
  const threads = Array.from({ length: poolSize(navigator.hardwareConcurrency) }, () => new Worker('/worker.js'));
  const workers = threads.map(poolWorker);
  const provider = { url: server, token };
  // Each worker opens the spam model once, untimed (a new user's download is the model's own row):
  // all at once, so the download lock (PrivateStore.packages.exclusive) is exercised.
  await Promise.all(workers.map((w) => w.call({ kind: 'prepare', provider })));
  const counts = { verdicts: 0, links: 0, topics: 0, ham: 0 };
  const topicFailures: Record<string, number> = {};
  const count = (e: WorkerEvent) => {
    if (e.event === 'outcome' && e.outcome.kind === 'verdict') {
      counts.verdicts++;
      if (!e.outcome.spam) counts.ham++;
    } else if (e.event === 'blocklist') counts.links++;
    else if (e.event === 'topic' && e.topic.kind === 'shared') counts.topics++;
    else if (e.event === 'topic') {
      // Grouped by what went wrong, not by which message.
      const detail = (e.topic.detail ?? '').split('\n')[0]!.replace(/message \S+ /g, 'message ');
      const why = `${e.topic.kind}: ${detail.slice(0, 120)}`;
      topicFailures[why] = (topicFailures[why] ?? 0) + 1;
    }
  };
  const t = performance.now();
  await new WorkerPool(workers).call({ kind: 'classify', provider, items }, count);
  const ms = performance.now() - t;
  const heap = Math.max(...(await Promise.all(threads.map(heapOf))));
  return { ms, workers: workers.length, heap, ...counts, topicFailures };
}

(globalThis as unknown as { backlogRun: typeof backlogRun }).backlogRun = backlogRun;
