// The long kill -9 runs of fault-scenario.ts: many kills at random moments and
// aimed ones, on the embedded SQLite store and on a real PostgreSQL 15.
import { after, before, describe, test } from 'node:test';
import { runFaultScenario } from './fault-scenario.js';
import { postgresMissing, startPostgres, type TestPostgres } from '../../provider-server/test/postgres.js';

const LONG = {
  users: 4,
  messagesPerUser: 15,
  kills: 12,
  killWindowMs: [0, 2000] as [number, number],
  aimed: { afterRequest: 0.15, onAnswer: 0.3 },
};

test('kill -9 under load, repeatedly (SQLite): exactly once, every verdict delivered, integrity_check ok', async (t) => {
  const r = await runFaultScenario(LONG);
  t.diagnostic(
    `${r.kills} kills, ${r.resent} requests re-sent (${r.replayed} answered from the record), ${r.seconds} s`,
  );
});

test('kill -9 under load, repeatedly, topics (SQLite): every topic exactly once, integrity_check ok', async (t) => {
  const r = await runFaultScenario({ ...LONG, task: 'topics' });
  t.diagnostic(
    `${r.kills} kills, ${r.resent} requests re-sent (${r.replayed} answered from the record), ${r.seconds} s`,
  );
});

describe('postgres', { skip: postgresMissing() }, () => {
  let cluster: TestPostgres;
  before(async () => {
    cluster = await startPostgres();
  });
  after(() => cluster?.stop());

  test('kill -9 under load, repeatedly (PostgreSQL store): exactly once, every verdict delivered', async (t) => {
    const r = await runFaultScenario({ ...LONG, store: await cluster.database() });
    t.diagnostic(
      `${r.kills} kills, ${r.resent} requests re-sent (${r.replayed} answered from the record), ${r.seconds} s`,
    );
  });
});
