// The worker's typed calls in this process, as the background makes them:
// both ends of a link (worker-client.ts ↔ worker-service.ts) that pass
// messages asynchronously and structured-cloned, like postMessage.
import { WorkerClient } from '../private/worker-client.js';
import type { WorkerEnvelope } from '../private/worker-protocol.js';
import { serveWorker } from '../private/worker-service.js';

export function inProcessWorker(): WorkerClient {
  let toClient: (m: WorkerEnvelope) => void = () => {};
  const serve = serveWorker((m) => queueMicrotask(() => toClient(structuredClone(m))));
  return new WorkerClient({
    post: (m) => queueMicrotask(() => serve(structuredClone(m))),
    onMessage: (cb) => (toClient = cb),
    onClose: () => {},
  });
}
