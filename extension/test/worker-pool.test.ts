// The worker pool: sized to the device, every message of a batch dealt to
// exactly one worker, each worker pacing to its share, a failed share not
// stopping the others.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { deal, poolSize, WorkerPool } from '../private/worker-pool.js';
import { WorkerCallError } from '../private/worker-client.js';
import type { WorkerRequest } from '../private/worker-protocol.js';

test('the pool leaves a core to the browser, takes at most 4 and at least 1', () => {
  assert.deepEqual(
    [undefined, 0, 1, 2, 3, 4, 5, 8, 64].map((c) => poolSize(c)),
    [1, 1, 1, 1, 2, 3, 4, 4, 4],
  );
});

test('a batch is dealt round-robin: each message to exactly one worker, no empty share', () => {
  const items = Array.from({ length: 10 }, (_, i) => ({ messageId: `m${i}`, raw: '' }));
  const shares = deal(items, 4);
  assert.deepEqual(
    shares.map((s) => s.map((i) => i.messageId)),
    [
      ['m0', 'm4', 'm8'],
      ['m1', 'm5', 'm9'],
      ['m2', 'm6'],
      ['m3', 'm7'],
    ],
  );
  assert.equal(deal(items.slice(0, 2), 4).length, 2);
  assert.equal(deal([], 4).length, 1);
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
