// Several WASM workers behind one typed call(): a batch of messages is
// spread over them, each checking its share over its own provider session,
// so a backlog uses the device's cores (the provider's work per message is
// the same). Each worker paces itself to its share of the provider's rate
// (client/core/pacer.ts), so together they stay within it. No browser API
// here, so it is unit-tested in Node.
import type { KeepAwake } from '../lib/keep-awake.js';
import type { WorkerClient } from './worker-client.js';
import type { ClassifyItem, WorkerEvent, WorkerRequest, WorkerResults } from './worker-protocol.js';

/** Workers for a device with `cores` logical cores: one core left to the browser, at most 4, at least 1. */
export function poolSize(cores: number | undefined): number {
  return Math.max(1, Math.min(4, Math.floor(cores ?? 1) - 1));
}

/** `items` dealt round-robin into at most `n` non-empty shares, so each share's progress runs alike. */
export function deal(items: ClassifyItem[], n: number): ClassifyItem[][] {
  const shares: ClassifyItem[][] = Array.from({ length: Math.max(1, Math.min(n, items.length)) }, () => []);
  items.forEach((item, i) => shares[i % shares.length].push(item));
  return shares;
}

type Caller = Pick<WorkerClient, 'call'>;

export class WorkerPool {
  /** `awake`: what keeps an event page awake while a call runs, each event of the call being progress. */
  constructor(
    private readonly workers: Caller[],
    private readonly awake?: Pick<KeepAwake, 'hold'>,
  ) {
    if (workers.length === 0) throw new Error('a worker pool needs a worker');
  }

  get size(): number {
    return this.workers.length;
  }

  /**
   * A classify request is dealt over the workers, its first message alone
   * first: that one downloads a new model version, which the others then
   * open from IndexedDB, and resumes the topic requests a stopped worker
   * kept (while the workers run, a kept request is another's in flight).
   * Every worker is reset; other requests go
   * to the first worker. A failed share does not stop the others (their
   * verdicts are stored as they come): the first failure is thrown once all
   * have settled.
   */
  call<K extends WorkerRequest['kind']>(
    request: Extract<WorkerRequest, { kind: K }>,
    onEvent: (e: WorkerEvent) => void = () => {},
  ): Promise<WorkerResults[K]> {
    const hold = this.awake?.hold();
    const progress = (e: WorkerEvent) => {
      hold?.renew();
      onEvent(e);
    };
    return this.run(request, progress).finally(() => hold?.release());
  }

  private async run<K extends WorkerRequest['kind']>(
    request: Extract<WorkerRequest, { kind: K }>,
    onEvent: (e: WorkerEvent) => void,
  ): Promise<WorkerResults[K]> {
    if (request.kind === 'reset') {
      await Promise.all(this.workers.map((w) => w.call({ kind: 'reset' })));
      return null as WorkerResults[K];
    }
    if (request.kind !== 'classify') return this.workers[0].call(request, onEvent);
    const { provider, items } = request as Extract<WorkerRequest, { kind: 'classify' }>;
    const paceShare = this.workers.length;
    const classify = (i: number, share: ClassifyItem[], resumeKept: boolean) =>
      this.workers[i].call({ kind: 'classify', provider, items: share, paceShare, resumeKept }, onEvent);
    const settled = [...(await Promise.allSettled([classify(0, items.slice(0, 1), true)]))];
    if (items.length > 1) {
      const shares = deal(items.slice(1), paceShare);
      settled.push(...(await Promise.allSettled(shares.map((share, i) => classify(i, share, false)))));
    }
    const failed = settled.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    if (failed) throw failed.reason;
    return null as WorkerResults[K];
  }
}
