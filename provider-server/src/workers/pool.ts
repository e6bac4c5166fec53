// A fixed pool of worker threads for crypto, so a slow request never blocks
// the event loop that serves every other session. Tasks carry an optional
// affinity key: tasks with the same key always run on the same worker, which
// keeps per-session state (the OT sender's pool) in one place.
//
// A worker module calls `serveTasks(handlers)` (worker-side half below) and
// exports `typeof handlers` as its task table: WorkerPool<Tasks> then checks
// every call's operation, arguments and result type at compile time.
import { createHash } from 'node:crypto';
import { parentPort, Worker, workerData } from 'node:worker_threads';

interface Request {
  id: number;
  op: string;
  args: unknown[];
}
interface Reply {
  id: number;
  ok: boolean;
  value?: unknown;
  /** Only a public, secret-free message crosses back (see serveTasks). */
  error?: { message: string; code?: string };
}

export class TaskError extends Error {
  constructor(
    message: string,
    readonly code?: string,
  ) {
    super(message);
    this.name = 'TaskError';
  }
}

/** A worker's operations: the handler object it passes to serveTasks. */
export type TaskTable = Record<string, (...args: never[]) => unknown>;

type Args<Tasks extends TaskTable, K extends keyof Tasks> = Parameters<Tasks[K]>;
type Result<Tasks extends TaskTable, K extends keyof Tasks> = Promise<Awaited<ReturnType<Tasks[K]>>>;

interface Slot {
  worker: Worker;
  pending: Map<number, { resolve(v: unknown): void; reject(e: Error): void }>;
  load: number;
}

export class WorkerPool<Tasks extends TaskTable> {
  private readonly slots: Slot[] = [];
  private nextId = 1;
  private closed = false;

  /**
   * @param entry URL of the TypeScript worker module (it must call serveTasks)
   * @param size number of threads
   * @param data passed to the worker as workerData.data
   */
  constructor(entry: URL, size: number, data: unknown = {}) {
    for (let i = 0; i < size; i++) this.slots.push(this.spawn(entry, data));
  }

  private spawn(entry: URL, data: unknown): Slot {
    const worker = new Worker(new URL('./bootstrap.mjs', import.meta.url), { workerData: { entry: entry.href, data } });
    const slot: Slot = { worker, pending: new Map(), load: 0 };
    worker.on('message', (r: Reply) => {
      const p = slot.pending.get(r.id);
      if (!p) return;
      slot.pending.delete(r.id);
      if (--slot.load === 0) worker.unref();
      if (r.ok) p.resolve(r.value);
      else p.reject(new TaskError(r.error?.message ?? 'task failed', r.error?.code));
    });
    const failAll = (why: string): void => {
      for (const p of slot.pending.values()) p.reject(new TaskError(why));
      slot.pending.clear();
      slot.load = 0;
      worker.unref();
    };
    worker.on('error', (e) => failAll(`crypto worker crashed: ${e.message}`));
    worker.on('exit', (code) => {
      if (!this.closed) failAll(`crypto worker exited with code ${code}`);
    });
    worker.unref(); // idle workers never keep the process alive; busy ones do (see post)
    return slot;
  }

  get size(): number {
    return this.slots.length;
  }

  private pick(affinity?: string): Slot {
    if (affinity !== undefined) {
      const h = createHash('sha256').update(affinity).digest().readUInt32BE(0);
      return this.slots[h % this.slots.length];
    }
    return this.slots.reduce((best, s) => (s.load < best.load ? s : best));
  }

  /** Runs `op` on the least loaded worker. */
  run<K extends keyof Tasks & string>(op: K, ...args: Args<Tasks, K>): Result<Tasks, K> {
    return this.post(undefined, op, args);
  }

  /** Runs `op` on the worker that owns `affinity` (always the same one, for per-session state). */
  runOn<K extends keyof Tasks & string>(affinity: string, op: K, ...args: Args<Tasks, K>): Result<Tasks, K> {
    return this.post(affinity, op, args);
  }

  private post<K extends keyof Tasks & string>(
    affinity: string | undefined,
    op: K,
    args: Args<Tasks, K>,
  ): Result<Tasks, K> {
    if (this.closed) return Promise.reject(new TaskError('worker pool is closed'));
    const slot = this.pick(affinity);
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      slot.pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
      if (slot.load++ === 0) slot.worker.ref();
      slot.worker.postMessage({ id, op, args } satisfies Request);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}

/**
 * Worker side: answers the pool's requests with `handlers[op](...args)`.
 * Errors cross back with their message and an optional `code` property only;
 * handlers must not put secrets in error messages (stack traces never cross).
 * Returns the options given to the pool (workerData.data).
 */
export function serveTasks(handlers: TaskTable): unknown {
  if (!parentPort) throw new Error('serveTasks must run in a worker thread');
  const port = parentPort;
  port.on('message', async (req: Request) => {
    try {
      const h = handlers[req.op];
      if (!h) throw new TaskError(`unknown task ${req.op}`);
      const value = await (h as (...a: unknown[]) => unknown)(...req.args);
      const transfer =
        value instanceof Uint8Array && value.byteOffset === 0 && value.byteLength === value.buffer.byteLength
          ? [value.buffer as ArrayBuffer]
          : [];
      port.postMessage({ id: req.id, ok: true, value } satisfies Reply, transfer);
    } catch (e) {
      const err = e as Error & { code?: unknown };
      port.postMessage({
        id: req.id,
        ok: false,
        error: { message: String(err?.message ?? err), code: typeof err?.code === 'string' ? err.code : undefined },
      } satisfies Reply);
    }
  });
  return (workerData as { data?: unknown })?.data;
}
