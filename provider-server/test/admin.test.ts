// The admin endpoint: the topics the provider learnt, per topic and per user,
// behind an admin bearer token configured by its SHA-256 only.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { after, before, test } from 'node:test';
import { markClassified, startHarness, type Harness } from './harness.js';

const TOKEN = 'pmfadmin_test-token';
let h: Harness;
let off: Harness;
before(async () => {
  h = await startHarness({}, { adminTokenSha256: [createHash('sha256').update(TOKEN).digest('hex')] });
  off = await startHarness();
  const { userId } = await h.store.addUser('carol');
  await h.store.addUser('dave');
  for (const [i, topic] of [3, 3, 7, -1].entries()) {
    await h.store.deliver(userId, `t-${i}`, 'Subject: x\r\n\r\ny');
    await markClassified(h.store, userId, `t-${i}`, 'topics');
    await h.store.recordTopic(userId, `t-${i}`, 'topics', 1, topic);
  }
  await h.store.setTopicOptOut(userId, true);
});
after(async () => {
  await h.close();
  await off.close();
});

const get = (hh: Harness, p: string, token?: string) =>
  fetch(`${hh.server.httpUrl}${p}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});

test('without the admin token: 401; without configured tokens the endpoint does not exist', async () => {
  assert.equal((await get(h, '/admin/topics')).status, 401);
  assert.equal((await get(h, '/admin/topics', 'pmfadmin_wrong')).status, 401);
  assert.equal((await get(off, '/admin/topics', TOKEN)).status, 404);
});

test('per-topic counts and one user history, without the out-of-range marker', async () => {
  const counts = (await (await get(h, '/admin/topics', TOKEN)).json()) as {
    counts: { topic: number; count: number; name: string }[];
  };
  assert.deepEqual(
    counts.counts.map((c) => [c.topic, c.count, c.name]),
    [
      [3, 2, 'topic 3'],
      [7, 1, 'topic 7'],
    ],
  );
  const carol = (await (await get(h, '/admin/topics?user=carol', TOKEN)).json()) as {
    optedOut: boolean;
    history: { messageId: string; topic: number }[];
  };
  assert.equal(carol.optedOut, true);
  assert.deepEqual(
    carol.history.map((r) => r.messageId),
    ['t-0', 't-1', 't-2'],
  );
  const dave = (await (await get(h, '/admin/topics?user=dave', TOKEN)).json()) as { history: unknown[] };
  assert.deepEqual(dave.history, []);
  assert.equal((await get(h, '/admin/topics?user=nobody', TOKEN)).status, 404);
  assert.equal((await get(h, '/admin/other', TOKEN)).status, 404);
});
