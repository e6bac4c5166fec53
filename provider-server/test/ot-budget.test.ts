// The provider's unused OTs are bounded for all sessions together
// (limits.otPoolMiB), not only per session: with the real crypto workers,
// sessions that fill their pools are refused past the budget (ot_pool_full,
// the session closed, the client to come back later), and what a closed
// session held is available to the next. The honest client asks for at most
// TOPUP_OTS at a time, so many of them fit. The memory this bounds is
// measured by the load bench's rss_mb_otpool_300.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { TOPUP_OTS } from '../../protocol/limits.js';
import { loadHe, type He } from '../../wasm/ts/he.js';
import { MAX_EXTEND, type OtReceiver } from '../../wasm/ts/ot.js';
import { helloSession, type TestClient } from './harness.js';
import { startRealProvider, type RealProvider } from './real-provider.js';

const BUDGET_MIB = 4; // two full extensions, or sixteen honest top-ups
let provider: RealProvider;
let he: He;
let token: string;

before(async () => {
  provider = await startRealProvider({ overrides: { workers: 1, limits: { otPoolMiB: BUDGET_MIB } } });
  token = (await provider.store.addUser('alice')).token;
  he = await loadHe();
});
after(() => provider.close());

/** A session with its base OTs done. */
const session = () =>
  helloSession(provider.server.wsUrl, he, { token, modelId: 'spam', modelVersion: 1 }, { baseOts: true });

/** Extends by `n` OTs; the provider's answer. */
const extend = (s: { c: TestClient; receiver: OtReceiver }, n: number, id: number) =>
  s.c.request('ot', id, { payload: s.receiver.extend(n) });

test('sessions filling their OT pools are refused past the budget for all of them, and closed', async () => {
  const sessions = await Promise.all(Array.from({ length: 4 }, () => session()));
  const answers: string[] = [];
  for (const [i, s] of sessions.entries()) {
    for (let k = 0; k < 2 && !s.c.closed; k++) {
      const r = await extend(s, MAX_EXTEND, 3 + k); // 2 MiB each: two make a full pool
      answers.push(r.name === 'error' ? r.code : r.name);
      if (r.name === 'error') assert.equal((await s.c.waitClosed()).code, 1008, `session ${i} closed`);
    }
  }
  const accepted = answers.filter((a) => a === 'ot_reply').length;
  assert.ok(accepted * 2 <= BUDGET_MIB, `${accepted} extensions of 2 MiB accepted within ${BUDGET_MIB} MiB`);
  assert.ok(answers.includes('ot_pool_full'), answers.join(' '));
  for (const s of sessions) s.c.close();
});

test('what a closed session held is free for the next; honest top-ups fit many sessions', async () => {
  const full = await session();
  assert.equal((await extend(full, MAX_EXTEND, 3)).name, 'ot_reply');
  full.c.close();
  while (provider.server.sessions.size > 0) await new Promise((r) => setTimeout(r, 20));
  // 4 MiB hold 16 of TOPUP_OTS (252 KiB): 16 honest sessions all get theirs.
  const honest = await Promise.all(Array.from({ length: 16 }, () => session()));
  const answers = await Promise.all(honest.map((s) => extend(s, TOPUP_OTS, 3)));
  assert.deepEqual(
    answers.map((a) => a.name),
    honest.map(() => 'ot_reply'),
  );
  for (const s of honest) s.c.close();
});
