// Typed calls to the WASM worker over any link that carries envelopes (a
// Worker, or the offscreen document's port): request → events → result or
// a named failure. No browser API here, so it is unit-tested in Node.
import type { WorkerEnvelope, WorkerEvent, WorkerFailure, WorkerRequest, WorkerResults } from './worker-protocol.js';

/** Something envelopes can be posted to and received from. */
export interface WorkerLink {
  post(msg: WorkerEnvelope): void;
  onMessage(cb: (msg: WorkerEnvelope) => void): void;
  /** Called when the link dies (offscreen document closed, worker crashed). */
  onClose(cb: () => void): void;
}

export class WorkerCallError extends Error {
  constructor(readonly failure: WorkerFailure) {
    super(failure.detail);
    this.name = 'WorkerCallError';
  }
}

type Pending = { onEvent(e: WorkerEvent): void; resolve(v: unknown): void; reject(e: Error): void };

/** Typed calls over one link; every call gets its own id. */
export class WorkerClient {
  /**
   * Ids start at random: the worker outlives a restarted background (Chromium's
   * offscreen document) and may still answer the old background's calls over
   * the new link; counting from 1 again would hand those answers to new calls.
   */
  private next = crypto.getRandomValues(new Uint32Array(1))[0];
  private readonly pending = new Map<number, Pending>();

  constructor(private readonly link: WorkerLink) {
    link.onMessage((msg) => {
      const p = this.pending.get(msg.id);
      if (!p) return;
      if ('event' in msg) return p.onEvent(msg.event);
      this.pending.delete(msg.id);
      if ('done' in msg) p.resolve(msg.done);
      else if ('failed' in msg) p.reject(new WorkerCallError(msg.failed));
    });
    link.onClose(() => {
      for (const p of this.pending.values())
        p.reject(new WorkerCallError({ code: 'protocol', detail: 'the spam-check worker stopped' }));
      this.pending.clear();
    });
  }

  call<K extends WorkerRequest['kind']>(
    request: Extract<WorkerRequest, { kind: K }>,
    onEvent: (e: WorkerEvent) => void = () => {},
  ): Promise<WorkerResults[K]> {
    const id = this.next++;
    return new Promise((resolve, reject) => {
      this.pending.set(id, { onEvent, resolve: resolve as (v: unknown) => void, reject });
      this.link.post({ id, request });
    });
  }
}
