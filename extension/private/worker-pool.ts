// Several WASM workers behind one typed call(): a batch of messages is
// handed out in chunks, each free worker taking the next over its own
// provider session, so a backlog uses every core of the device (the
// provider's work per message is the same) and the workers' stages overlap:
// while one extracts a chunk's topics (one worker at a time, worker-lock.ts),
// another checks the next chunk for spam and links. Each worker paces itself
// to its share of the provider's rate (client/core/pacer.ts), so together
// they stay within it. No browser API here, so it is unit-tested in Node.
import type { KeepAwake } from '../lib/keep-awake.js';
import type { ProviderConfig } from './account.js';
import type { WorkerClient } from './worker-client.js';
import type { ClassifyItem, WorkerEvent, WorkerRequest, WorkerResults } from './worker-protocol.js';

/** The most workers a pool starts: each holds its own models in memory (extension/private/README.md). */
export const MAX_WORKERS = 4;

/**
 * Messages a worker takes from a batch at a time: a chunk opens its own
 * sessions (one hello each for spam and topics), and a slow or hostile
 * message holds up only the rest of its chunk, never the other workers.
 */
export const CHUNK = 64;

/**
 * Workers for a device with `cores` logical cores: one per core, at most
 * MAX_WORKERS, at least 1. The browser's own threads are not starved: the
 * workers run at normal priority and the operating system shares the cores.
 */
export function poolSize(cores: number | undefined): number {
  return Math.max(1, Math.min(MAX_WORKERS, Math.floor(cores ?? 1)));
}

type Caller = Pick<WorkerClient, 'call'>;

/** A classify call being served: the messages not yet handed out, and how its chunks went. */
interface Batch {
  provider: ProviderConfig;
  /** Not yet handed to a worker (the first message alone, then the rest; none for a batch that only resumes). */
  items: ClassifyItem[];
  /** Handed out once the first message settled. */
  rest: ClassifyItem[];
  /** Messages per chunk: the rest spread evenly over the workers, at most the pool's chunk. */
  size: number;
  /** Its first message is not handed out yet. */
  first: boolean;
  onEvent: (e: WorkerEvent) => void;
  running: number;
  /** The first failed chunk's error: no more chunks are handed out, and the call rejects with it. */
  failure?: { reason: unknown };
  settle(failure?: { reason: unknown }): void;
}

export class WorkerPool {
  private readonly busy: boolean[];
  /** Calls with messages left, oldest first. */
  private readonly batches: Batch[] = [];

  /**
   * `awake`: what keeps an event page awake while a call runs, each event of the call being progress.
   * `chunk`: messages a worker takes at a time (CHUNK).
   */
  constructor(
    private readonly workers: Caller[],
    private readonly awake?: Pick<KeepAwake, 'hold'>,
    private readonly chunk = CHUNK,
  ) {
    if (workers.length === 0) throw new Error('a worker pool needs a worker');
    this.busy = workers.map(() => false);
  }

  get size(): number {
    return this.workers.length;
  }

  /**
   * A classify request's first message goes alone first: it downloads a new
   * model version, which the others then open from IndexedDB, and resumes
   * the topic requests a stopped worker kept (only when no other chunk runs:
   * a kept request of a running worker is in flight, not stopped). The rest
   * is handed out in chunks of at most `chunk` messages, spread over all
   * workers, each free worker taking the next; the call with the fewest
   * messages left goes first, so a message the user opens is not queued
   * behind a backlog. A failed chunk stops the handing out (its verdicts,
   * and those of the chunks running, are stored as they come): the call
   * rejects once those settled. Every worker is reset; other requests go to
   * the first worker.
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
    const failure = await new Promise<{ reason: unknown } | undefined>((settle) => {
      this.batches.push({
        provider,
        items: items.slice(0, 1),
        rest: items.slice(1),
        size: Math.max(1, Math.min(this.chunk, Math.ceil((items.length - 1) / this.workers.length))),
        first: true,
        onEvent,
        running: 0,
        settle,
      });
      this.dispatch();
    });
    if (failure) throw failure.reason;
    return null as WorkerResults[K];
  }

  /** Hands chunks to the free workers, the batch with the fewest messages left first. */
  private dispatch(): void {
    for (let w = this.busy.indexOf(false); w >= 0; w = this.busy.indexOf(false)) {
      const open = this.batches.filter((b) => b.first || (b.items.length > 0 && !b.failure));
      if (open.length === 0) return;
      const batch = open.reduce((a, b) => (b.items.length + b.rest.length < a.items.length + a.rest.length ? b : a));
      const share = batch.items.splice(0, batch.first ? 1 : batch.size);
      const resumeKept = batch.first && this.busy.every((b) => !b);
      batch.first = false;
      this.busy[w] = true;
      batch.running++;
      void this.workers[w]
        .call(
          {
            kind: 'classify',
            provider: batch.provider,
            items: share,
            paceShare: this.workers.length,
            resumeKept,
          },
          batch.onEvent,
        )
        .catch((reason: unknown) => {
          batch.failure ??= { reason };
        })
        .then(() => {
          this.busy[w] = false;
          batch.running--;
          // The first message settled: the rest may go, to every worker.
          if (batch.rest.length > 0) batch.items.push(...batch.rest.splice(0));
          if (batch.running === 0 && (batch.items.length === 0 || batch.failure)) {
            this.batches.splice(this.batches.indexOf(batch), 1);
            batch.settle(batch.failure);
          }
          this.dispatch();
        });
    }
  }
}
