// The store's and the workers' metrics: every store statement timed by kind
// (a durable write until it is on disk), failures other than constraint
// answers counted; worker memory and restarts are in pool.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { statementKind } from '../src/store-observer.js';
import { openSqliteStore } from '../src/store-sqlite.js';
import { startHarness } from './harness.js';

test('store statements are observed by kind; a constraint is an answer, a store that is gone a failure', async () => {
  const seen: [string, boolean][] = [];
  const store = openSqliteStore(':memory:');
  store.observe((statement, seconds, failed) => {
    assert.ok(seconds >= 0 && seconds < 60);
    seen.push([statement, failed]);
  });
  const { userId } = await store.addUser('dora');
  await assert.rejects(store.addUser('dora'), /already exists/);
  await store.close();
  await assert.rejects(store.deliver(userId, 'm1', 'Subject: x\r\n\r\ny'));
  assert.deepEqual(seen, [
    ['insert users', false],
    ['insert tokens', false],
    ['delete tokens', false], // the tokens past the user's cap (tokens.ts)
    ['insert users', false],
    ['insert messages', true],
  ]);
  assert.equal(statementKind('SELECT 1 AS x FROM classified WHERE user_id = ?'), 'select classified');
  assert.equal(statementKind('DELETE FROM rate_windows WHERE user_id = ?'), 'delete rate_windows');
});

test('/metrics has the store timings and the worker restarts', async () => {
  const h = await startHarness();
  try {
    await h.store.addUser('carol');
    const metrics = await (await fetch(`${h.server.httpUrl}/metrics`)).text();
    assert.match(metrics, /^pmf_store_seconds_count\{statement="insert users"\} 1$/m);
    assert.match(metrics, /^# TYPE pmf_store_errors_total counter$/m);
    assert.match(metrics, /^pmf_worker_restarts_total 0$/m);
  } finally {
    await h.close();
  }
});
