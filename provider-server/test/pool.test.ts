import assert from 'node:assert/strict';
import { after, test } from 'node:test';
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
