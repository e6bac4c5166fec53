// The worker pool: sized to the device, every message of a batch handed to
// exactly one worker in chunks, each worker pacing to its share, a slow chunk
// not holding up the others, a failed chunk failing the call once the others settled.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MAX_WORKERS, poolSize, WorkerPool } from '../private/worker-pool.js';
import { WorkerCallError } from '../private/worker-client.js';
import type { WorkerRequest } from '../private/worker-protocol.js';

test('the pool takes a worker per core, at most MAX_WORKERS and at least 1', () => {
  assert.deepEqual(
    [undefined, 0, 1, 2, 3, 4, 5, 8, 64].map((c) => poolSize(c)),
    [1, 1, 1, 2, 3, 4, 4, 4, 4],
  );
  assert.equal(MAX_WORKERS, 4);
});

/**
 * Workers that record the chunks they get, one request at a time each (as
 * worker-service.ts serves them); a chunk takes `ms` per message, or until
 * `hold(ids)` resolves.
 */
function recorder(log: { worker: number; ids: string[]; start: number; end?: number }[], ms = 2) {
  let clock = 0;
  return (worker: number, hold: (ids: string[]) => Promise<void> | undefined = () => undefined) => {
    let queue: Promise<unknown> = Promise.resolve();
    return {
      call: (request: WorkerRequest) =>
        (queue = queue.then(async () => {
          if (request.kind !== 'classify') return null;
          const entry: (typeof log)[number] = { worker, ids: request.items.map((i) => i.messageId), start: clock++ };
          log.push(entry);
          await (hold(entry.ids) ?? new Promise((r) => setTimeout(r, ms * entry.ids.length)));
          entry.end = clock++;
          return null;
        })),
    };
  };
}

/** Waits until `ready()` (at most a second). */
async function until(ready: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !ready(); i++) await new Promise((r) => setTimeout(r, 5));
}

const mail = (n: number, prefix = 'm') =>
  Array.from({ length: n }, (_, i) => ({ messageId: `${prefix}${i}`, raw: 'x' }));
const provider = { url: 'wss://p', token: 't' } as never;

test('chunks overlap: while one worker is held up in its chunk (a slow or hostile message), the others take the next ones', async () => {
  const log: Parameters<typeof recorder>[0] = [];
  const worker = recorder(log);
  let release = () => {};
  const hostile = new Promise<void>((r) => (release = r));
  const pool = new WorkerPool(
    [worker(0, (ids) => (ids.includes('m1') ? hostile : undefined)), worker(1)] as never,
    undefined,
    4,
  );
  const done = pool.call({ kind: 'classify', provider, items: mail(21) });
  // The hostile message's chunk holds worker 0; worker 1 gets through every other chunk meanwhile.
  await until(() => log.filter((c) => c.end !== undefined).flatMap((c) => c.ids).length >= 17);
  const finished = log.filter((c) => c.end !== undefined).flatMap((c) => c.ids);
  assert.deepEqual(
    finished.sort(),
    mail(21)
      .map((m) => m.messageId)
      .filter((id) => !['m1', 'm2', 'm3', 'm4'].includes(id))
      .sort(),
    'only the hostile message’s own chunk waits',
  );
  release();
  await done;
  assert.deepEqual(
    log.map((c) => c.ids.length),
    [1, 4, 4, 4, 4, 4],
  );
});

test('a message the user opens goes ahead of a backlog: the call with the fewest messages left takes the next free worker', async () => {
  const log: Parameters<typeof recorder>[0] = [];
  const worker = recorder(log, 3);
  const pool = new WorkerPool([worker(0), worker(1)] as never, undefined, 2);
  const backlog = pool.call({ kind: 'classify', provider, items: mail(40, 'b') });
  await until(() => log.length >= 3);
  await pool.call({ kind: 'classify', provider, items: mail(1, 'open') });
  const opened = log.find((c) => c.ids[0] === 'open0')!;
  const before = log.filter((c) => c.end !== undefined && c.end < opened.start).flatMap((c) => c.ids);
  assert.ok(before.length <= 5, `${before.length} backlog messages were checked before the opened one`);
  await backlog;
  assert.equal(log.flatMap((c) => c.ids).length, 41, 'the backlog went on after it');
});

test('classify runs its first message alone, then on every worker at once with its pace share; a failed share fails the call after the others finish', async () => {
  const seen: { worker: number; request: WorkerRequest }[] = [];
  let finished = 0;
  const worker = (i: number, fail = false) => ({
    call: async (request: WorkerRequest) => {
      seen.push({ worker: i, request });
      await new Promise((r) => setTimeout(r, 10 * (3 - i)));
      if (fail && request.kind === 'classify') throw new WorkerCallError({ code: 'protocol', detail: `worker ${i}` });
      finished++;
      return null;
    },
  });
  const pool = new WorkerPool([worker(0), worker(1, true), worker(2)] as never);
  const items = Array.from({ length: 7 }, (_, i) => ({ messageId: `m${i}`, raw: 'x' }));
  const provider = { url: 'wss://p', token: 't' } as never;
  await assert.rejects(pool.call({ kind: 'classify', provider, items }), /worker 1/);
  assert.equal(finished, 3, 'the other shares ran to the end');
  const classify = seen.filter((s) => s.request.kind === 'classify');
  assert.deepEqual(
    classify.map((s) => s.worker),
    [0, 0, 1, 2],
  );
  assert.deepEqual(classify[0].request.kind === 'classify' && classify[0].request.items, [items[0]]);
  const ids = classify.flatMap((s) => (s.request.kind === 'classify' ? s.request.items.map((i) => i.messageId) : []));
  assert.deepEqual(ids.sort(), items.map((i) => i.messageId).sort());
  for (const s of classify) assert.equal(s.request.kind === 'classify' && s.request.paceShare, 3);
  assert.deepEqual(
    classify.map((s) => s.request.kind === 'classify' && s.request.resumeKept),
    [true, false, false, false],
    'kept topic requests are resumed by the first message alone, never while other workers run',
  );
  seen.length = 0;
  await pool.call({ kind: 'reset' });
  assert.deepEqual(
    seen.map((s) => s.worker),
    [0, 1, 2],
  );
});
