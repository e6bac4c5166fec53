// The short kill -9 runs of fault-scenario.ts (the long ones, also on
// PostgreSQL, are in fault.slow.test.ts): a few kills of the real provider
// process, or of its crypto worker, while clients classify, then every result
// delivered once.
import { test } from 'node:test';
import { runFaultScenario, WORKER_KILLS } from './fault-scenario.js';

for (const task of ['spam', 'topics'] as const) {
  test(`kill -9 under load (${task}): every message classified exactly once, every result delivered, the store intact`, async (t) => {
    const r = await runFaultScenario({
      task,
      users: 2,
      messagesPerUser: 4,
      kills: 2,
      killWindowMs: [300, 3000],
      aimed: { afterRequest: 0.2, onAnswer: 0.5 },
    });
    t.diagnostic(
      `${r.kills} kills, ${r.resent} requests re-sent (${r.replayed} answered from the record), ${r.seconds} s`,
    );
  });

  // The sessions whose OT state died with the worker, busy or idle, are told
  // (session_lost) and the clients resume on new sessions.
  test(`a crypto worker killed twice under load (${task}): every message exactly one verdict, the store intact`, async (t) => {
    const r = await runFaultScenario({ ...WORKER_KILLS, task });
    t.diagnostic(`${r.kills} worker kills, ${r.resent} requests re-sent, ${r.seconds} s`);
  });
}
