// A fixed pool of worker threads for crypto, so a slow request never blocks
// the event loop that serves every other session. Tasks carry an optional
// affinity key: tasks with the same key always run on the same worker, which
// keeps per-session state (the OT sender's pool) in one place.
//
// Each worker takes tasks from two queues: per-email work first, session
// setup (base OTs, public and key-switching keys: ~100 ms each) only when no
// per-email task waits or runs. A storm of new sessions then delays a steady
// session by at most the one setup task already running, not by the whole
// queue. Up to EMAIL_IN_FLIGHT per-email tasks are posted to a worker at
// once: it runs them back to back instead of sleeping until the event loop
// gets round to sending the next (waking a sleeping thread costs the loop
// about three times what posting to a busy one does, and the loop takes a
// worker's replies only between its other work). A worker that dies is
// replaced; its running and queued tasks fail with a TaskError (their
// per-session state died with it).
//
// A worker module calls `serveTasks(handlers)` (worker-side half below) and
// exports `typeof handlers` as its task table: WorkerPool<Tasks> then checks
// every call's operation, arguments and result type at compile time.
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

/** Per-email work runs before session setup. */
export type Priority = 'email' | 'setup';

/** Where and how urgently a task runs. */
export interface Placement {
  /** Tasks with the same key run on the same worker. */
  affinity?: string;
  priority?: Priority;
}

type Args<Tasks extends TaskTable, K extends keyof Tasks> = Parameters<Tasks[K]>;
type Result<Tasks extends TaskTable, K extends keyof Tasks> = Promise<Awaited<ReturnType<Tasks[K]>>>;

interface Job {
  request: Request;
  priority: Priority;
  resolve(v: unknown): void;
  reject(e: Error): void;
}

interface Slot {
  worker: Worker;
  /** How many times this slot's worker was replaced: state made in an earlier generation is gone. */
  generation: number;
  queues: Record<Priority, Job[]>;
  /** Posted to the worker, in the order it runs them. */
  running: Job[];
}

/** What /healthz reports about the pool. */
export interface PoolHealth {
  workers: number;
  /** Workers replaced after dying, since start. */
  restarts: number;
  /** True while a replacement happened in the last minute. */
  degraded: boolean;
}

/** One worker's memory: its V8 heap, and what lives outside it (the WebAssembly memory: keys, OT pools). */
export interface WorkerMemory {
  heapBytes: number;
  externalBytes: number;
}

/** The pool's own requests, answered by serveTasks before any task table (no task can have these names). */
const PING_OP = '\0ping';
const MEMORY_OP = '\0memory';

const DEGRADED_FOR_MS = 60_000;
/**
 * Per-email tasks posted to one worker at once (each is about a tenth of a
 * millisecond). The worker gets its next tasks only when the event loop
 * takes its replies, which under load is milliseconds apart: with a few in
 * flight, per-email tasks waited in the pool's queue while the worker sat
 * idle. The pool holds at most one task per session anyway.
 */
const EMAIL_IN_FLIGHT = 32;

export class WorkerPool<Tasks extends TaskTable> {
  private readonly slots: Slot[] = [];
  private nextId = 1;
  private closed = false;
  private restarts = 0;
  private lastRestart = -Infinity;

  /**
   * @param entry URL of the worker module (it must call serveTasks)
   * @param size number of threads
   * @param data passed to the worker as workerData.data
   * @param exited told of each worker that died (and was replaced): its exit code, and the error that ended it if any
   */
  constructor(
    private readonly entry: URL,
    size: number,
    private readonly data: unknown = {},
    private readonly exited?: (code: number, error: Error | undefined) => void,
  ) {
    for (let i = 0; i < size; i++) {
      const slot: Slot = { worker: this.newWorker(), generation: 0, queues: { email: [], setup: [] }, running: [] };
      this.attach(slot);
      this.slots.push(slot);
    }
  }

  private newWorker(): Worker {
    return new Worker(new URL('./bootstrap.mjs', import.meta.url), {
      workerData: { entry: this.entry.href, data: this.data },
    });
  }

  private attach(slot: Slot): void {
    const worker = slot.worker;
    worker.on('message', (r: Reply) => {
      // A worker runs its tasks one after the other, so it answers them in order.
      const job = slot.running[0];
      if (job?.request.id !== r.id) return;
      slot.running.shift();
      if (r.ok) job.resolve(r.value);
      else job.reject(new TaskError(r.error?.message ?? 'task failed', r.error?.code));
      this.pump(slot);
    });
    let failure: Error | undefined;
    worker.on('error', (e) => (failure = e)); // 'exit' follows and handles it
    worker.on('exit', (code) => {
      if (this.closed || slot.worker !== worker) return;
      this.exited?.(code, failure);
      const why = new TaskError(`crypto worker exited with code ${code}; it was replaced`);
      for (const job of [...slot.running, ...slot.queues.email, ...slot.queues.setup]) job.reject(why);
      slot.running = [];
      slot.queues = { email: [], setup: [] };
      this.restarts++;
      this.lastRestart = Date.now();
      slot.generation++;
      slot.worker = this.newWorker();
      this.attach(slot);
    });
    worker.unref(); // idle workers never keep the process alive; busy ones do (see pump)
  }

  get size(): number {
    return this.slots.length;
  }

  health(now = Date.now()): PoolHealth {
    return {
      workers: this.slots.length,
      restarts: this.restarts,
      degraded: now - this.lastRestart < DEGRADED_FOR_MS,
    };
  }

  /**
   * The generation of the worker that owns `affinity`: it changes when that
   * worker is replaced, and with it every piece of state kept there.
   */
  generation(affinity: string): number {
    return this.pick(affinity).generation;
  }

  private pick(affinity?: string): Slot {
    if (affinity !== undefined) return this.slots[fnv1a(affinity) % this.slots.length];
    const load = (s: Slot) => s.running.length + s.queues.email.length + s.queues.setup.length;
    return this.slots.reduce((best, s) => (load(s) < load(best) ? s : best));
  }

  /** Runs `op` as per-email work on the least loaded worker. */
  run<K extends keyof Tasks & string>(op: K, ...args: Args<Tasks, K>): Result<Tasks, K> {
    return this.schedule({}, op, ...args);
  }

  /** Runs `op` as per-email work on the worker that owns `affinity` (for per-session state). */
  runOn<K extends keyof Tasks & string>(affinity: string, op: K, ...args: Args<Tasks, K>): Result<Tasks, K> {
    return this.schedule({ affinity }, op, ...args);
  }

  /** Runs `op` where and as urgently as `placement` says. */
  schedule<K extends keyof Tasks & string>(placement: Placement, op: K, ...args: Args<Tasks, K>): Result<Tasks, K> {
    return this.enqueue(this.pick(placement.affinity), placement.priority ?? 'email', op, args) as Result<Tasks, K>;
  }

  /**
   * Resolves once every worker has answered a no-op task, queued as per-email
   * work (the health check): a worker that hangs or dies meanwhile never does.
   */
  async ping(): Promise<void> {
    await Promise.all(this.slots.map((slot) => this.enqueue(slot, 'email', PING_OP, [])));
  }

  /** Each worker's memory, asked as per-email work (for metrics; a scrape waits at most for a running setup). */
  memory(): Promise<WorkerMemory[]> {
    return Promise.all(this.slots.map((slot) => this.enqueue(slot, 'email', MEMORY_OP, []) as Promise<WorkerMemory>));
  }

  private enqueue(slot: Slot, priority: Priority, op: string, args: unknown[]): Promise<unknown> {
    if (this.closed) return Promise.reject(new TaskError('worker pool is closed'));
    return new Promise((resolve, reject) => {
      const request: Request = { id: this.nextId++, op, args };
      slot.queues[priority].push({ request, priority, resolve, reject });
      this.pump(slot);
    });
  }

  /** Posts the slot's next tasks, as many as `next` allows. */
  private pump(slot: Slot): void {
    for (let job = this.next(slot); job; job = this.next(slot)) {
      slot.running.push(job);
      slot.worker.postMessage(job.request);
    }
    // A worker with tasks keeps the process alive; an idle one does not.
    if (slot.running.length > 0) slot.worker.ref();
    else slot.worker.unref();
  }

  /**
   * The slot's next task to post: to an idle worker, per-email work first,
   * else a setup; to a busy one, per-email work while fewer than
   * EMAIL_IN_FLIGHT run and none of them is a setup.
   */
  private next({ running, queues }: Slot): Job | undefined {
    if (running.length === 0) return queues.email.shift() ?? queues.setup.shift();
    if (running.length < EMAIL_IN_FLIGHT && running[0].priority === 'email') return queues.email.shift();
    return undefined;
  }

  async close(): Promise<void> {
    this.closed = true;
    const why = new TaskError('worker pool is closed');
    for (const slot of this.slots) {
      for (const job of [...slot.running, ...slot.queues.email, ...slot.queues.setup]) job.reject(why);
    }
    await Promise.all(this.slots.map((s) => s.worker.terminate()));
  }
}

/**
 * 32-bit FNV-1a of a string's UTF-16 code units: spreads affinity keys over
 * the workers. Keys are the provider's random session ids, so nobody can
 * choose them to crowd one worker; a SHA-256 per task cost about 3 % of the
 * event loop under load.
 */
function fnv1a(key: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 0x01000193);
  return h >>> 0;
}

/** This worker thread's memory (process.memoryUsage's heap and external figures are per thread). */
function workerMemory(): WorkerMemory {
  const { heapUsed, external } = process.memoryUsage();
  return { heapBytes: heapUsed, externalBytes: external };
}

/** What every worker answers whatever its task table: a no-op (WorkerPool.ping) and its memory. */
const POOL_OPS = new Map<string, () => unknown>([
  [PING_OP, () => undefined],
  [MEMORY_OP, workerMemory],
]);

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
      const h = POOL_OPS.get(req.op) ?? handlers[req.op];
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
