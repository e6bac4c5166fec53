import assert from 'node:assert/strict';
import { after, test } from 'node:test';
import { createMetrics } from '../src/metrics.js';
import { TaskError, WorkerPool } from '../src/workers/pool.js';
import type { BusyTasks } from './fixtures/busy-worker.js';

const pool = new WorkerPool<BusyTasks>(new URL('./fixtures/busy-worker.ts', import.meta.url), 2);
after(() => pool.close());

test('a slow crypto task does not block the event loop', async () => {
  await pool.run('whoami'); // workers are up
  let ticks = 0;
  const timer = setInterval(() => ticks++, 10);
  const t0 = Date.now();
  await pool.run('spin', 400);
  clearInterval(timer);
  assert.ok(Date.now() - t0 >= 390);
  assert.ok(ticks >= 20, `the main thread kept running timers (${ticks} ticks)`);
});

test('tasks with the same affinity key run on the same worker; others spread', async () => {
  const a = await Promise.all(Array.from({ length: 6 }, () => pool.runOn('session-a', 'whoami')));
  assert.equal(new Set(a).size, 1);
  const spread = await Promise.all([pool.run('spin', 100), pool.run('spin', 100)]);
  assert.equal(new Set(spread).size, 2, 'two concurrent unpinned tasks use both workers');
});

test('errors cross back with their code and message only', async () => {
  await assert.rejects(
    pool.run('fail'),
    (e: unknown) =>
      e instanceof TaskError && e.code === 'bad_field' && !('stack' in e && String(e.stack).includes('busy-worker')),
  );
  // @ts-expect-error: the compiler refuses an unknown task; a stale worker refuses it too.
  await assert.rejects(pool.run('nope'), /unknown task nope/);
});

test('the compiler checks each call against the worker task table (tsc runs this file)', () => {
  const neverCalled = (): Promise<string> => {
    // @ts-expect-error: spin takes its milliseconds as a number
    void pool.run('spin', '400');
    // @ts-expect-error: whoami resolves to a thread id (a number)
    return pool.runOn('session-a', 'whoami');
  };
  assert.equal(typeof neverCalled, 'function');
});

test('per-email work overtakes queued session setup on a busy worker', async () => {
  const one = new WorkerPool<BusyTasks>(new URL('./fixtures/busy-worker.ts', import.meta.url), 1);
  try {
    await one.run('whoami');
    const done: string[] = [];
    const setups = Array.from({ length: 4 }, (_, i) =>
      one.schedule({ priority: 'setup' }, 'spin', 150).then(() => done.push(`setup ${i}`)),
    );
    const email = one.run('whoami').then(() => done.push('email'));
    await Promise.all([...setups, email]);
    // The first setup was already running; the email went next, not after all four.
    assert.deepEqual(done.slice(0, 2), ['setup 0', 'email']);
  } finally {
    await one.close();
  }
});

test('a busy event loop does not starve a worker: it is given many queued per-email tasks at once', async () => {
  await pool.runOn('s', 'whoami');
  const first = pool.runOn('s', 'spin', 100);
  // As under load: one task queued per session, a score of sessions on one worker.
  const queued = Array.from({ length: 20 }, () => pool.runOn('s', 'started'));
  const blockedUntil = Date.now() + 400; // the event loop is busy with other sessions meanwhile
  while (Date.now() < blockedUntil) {
    // busy
  }
  await first;
  const started = await Promise.all(queued);
  const late = started.filter((t) => t >= blockedUntil - 150).length;
  assert.equal(late, 0, `${late} of 20 tasks waited for the event loop to hand them to the idle worker`);
});

test('a worker runs queued per-email tasks back to back, without waiting for the event loop to post each', async () => {
  await pool.runOn('s', 'whoami');
  const first = pool.runOn('s', 'spin', 100);
  const second = pool.runOn('s', 'started');
  const blockedUntil = Date.now() + 400; // the event loop is busy with other sessions meanwhile
  while (Date.now() < blockedUntil) {
    // busy
  }
  await first;
  const started = await second;
  assert.ok(
    started < blockedUntil - 150,
    `the second task waited for the event loop: it started ${started - blockedUntil} ms after the loop was free`,
  );
});

test('a worker that dies is replaced: its tasks fail cleanly, the pool goes on, health says degraded', async () => {
  const exits: [number, Error | undefined][] = [];
  const p = new WorkerPool<BusyTasks>(new URL('./fixtures/busy-worker.ts', import.meta.url), 1, {}, (code, e) =>
    exits.push([code, e]),
  );
  try {
    assert.deepEqual(p.health(), { workers: 1, restarts: 0, degraded: false });
    assert.equal(p.generation('s'), 0);
    const crashed = p.runOn('s', 'crash');
    const queued = p.runOn('s', 'whoami');
    await assert.rejects(crashed, (e: unknown) => e instanceof TaskError && /replaced/.test(e.message));
    await assert.rejects(queued, TaskError);
    assert.equal(typeof (await p.run('whoami')), 'number');
    assert.deepEqual(p.health(), { workers: 1, restarts: 1, degraded: true });
    assert.equal(p.generation('s'), 1, "state kept for 's' in the dead worker is known to be gone");
    assert.deepEqual(exits, [[3, undefined]], 'the death is reported once, with its exit code (for the log)');
    assert.equal(p.health(Date.now() + 61_000).degraded, false);
  } finally {
    await p.close();
  }
});

test("metrics read each worker's memory and count restarts", async () => {
  const p = new WorkerPool<BusyTasks>(new URL('./fixtures/busy-worker.ts', import.meta.url), 1);
  try {
    const metrics = createMetrics({ workers: () => p.health(), workerMemory: () => p.memory() });
    const scrape = async (name: string) =>
      (await metrics.registry.getSingleMetric(name)!.get()).values.map((v) => [v.labels.kind, v.value]);
    const [before] = await p.memory();
    await p.run('hold', 64 << 20);
    const [after] = await p.memory();
    assert.ok(
      after.externalBytes - before.externalBytes >= 60 << 20,
      `${before.externalBytes} → ${after.externalBytes}`,
    );
    assert.ok(after.heapBytes > 0);
    const memory = new Map((await scrape('pmf_worker_memory_bytes')) as [string, number][]);
    assert.ok(memory.get('external')! >= 60 << 20 && memory.get('heap')! > 0, JSON.stringify([...memory]));
    assert.deepEqual(await scrape('pmf_worker_restarts_total'), [[undefined, 0]]);
    await assert.rejects(p.run('crash'));
    await p.run('whoami');
    assert.deepEqual(await scrape('pmf_worker_restarts_total'), [[undefined, 1]]);
    assert.deepEqual(await scrape('pmf_worker_restarts_total'), [[undefined, 1]], 'counted once');
  } finally {
    await p.close();
  }
});
