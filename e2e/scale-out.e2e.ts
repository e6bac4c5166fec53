// Two provider-server processes sharing their keys, packages and store behind
// a real HAProxy running provider-server/deploy/haproxy.cfg, with the real
// headless client, once on a shared SQLite file and once on a real
// PostgreSQL 15. At most once and the per-user rate limit hold across
// instances, and killing one instance (SIGKILL) under load moves its clients
// to the other with every message given exactly one verdict: a request whose
// answer was lost with the instance is re-sent to the other, which returns the
// recorded answer from the shared store (docs/protocol.md#exactly-once-verdicts).
// New connections per client address per minute are counted in the shared
// store too, so two instances together let no more in than one would.
import assert from 'node:assert/strict';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ProtocolError } from '../protocol/errors.js';
import { createConnector } from '../client/core/connect.js';
import { runClassification, type RunOutcome } from '../client/core/runner.js';
import { InterruptedRequest } from '../client/core/interrupted-request.js';
import type { SpamSession } from '../client/core/session.js';
import { nodeSocket } from '../client/node/cli.js';
import { DirectoryStorage } from '../client/node/node-storage.js';
import { startCluster, waitFor, type Cluster } from '../provider-server/test/cluster.js';
import { postgresMissing, startPostgres, type TestPostgres } from '../provider-server/test/postgres.js';
import { loadHe, type He } from '../wasm/ts/he.js';
import WebSocket from 'ws';

const RATE = 80;
const CLIENTS = 6;
const MESSAGES = 60;
let cluster: Cluster;
let he: He;

function mail(id: string): string {
  return `From: a@example.org\r\nSubject: note ${id}\r\nMessage-ID: <${id}>\r\n\r\nShall we meet at noon about ${id}?\r\n`;
}

/** A real client of `url` (an instance or HAProxy) for `token`, with its own package cache. */
function connector(url: string, token: string, cache: string) {
  return createConnector({
    server: url,
    token,
    he,
    storage: new DirectoryStorage(path.join(cluster.dir, 'clients', cache)),
    socket: nodeSocket,
  });
}

async function provision(name: string, ids: string[]): Promise<string> {
  return (await cluster.provision([{ name, messages: ids }])).get(name)!;
}

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(
    `two instances behind HAProxy, ${kind === 'sqlite' ? 'on a shared SQLite file' : 'on PostgreSQL'}`,
    {
      skip: kind === 'postgres' ? postgresMissing() : undefined,
    },
    () => {
      let postgres: TestPostgres | undefined;
      before(async () => {
        he = await loadHe();
        postgres = kind === 'postgres' ? await startPostgres() : undefined;
        cluster = await startCluster({
          instances: 2,
          haproxy: true,
          workers: 1,
          store: await postgres?.database(),
          limits: { requestsPerMinute: RATE, connectionsPerAddress: 1000, connectionsPerMinutePerAddress: 1000 },
        });
      });
      after(async () => {
        await cluster?.close();
        await postgres?.stop();
      });

      test('the same message sent via both instances gets one verdict and one already_classified', async () => {
        const token = await provision('alice', ['same']);
        const connectors = cluster.instances.map((inst, i) => connector(inst.url, token, `alice-${i}`));
        // Both sessions are set up first, so the two requests reach the instances together.
        const ready: (SpamSession | undefined)[] = await Promise.all(connectors.map((c) => c.connect(1)));
        const outcomes: RunOutcome[] = [];
        await Promise.all(
          connectors.map((c, i) =>
            // The runner, as a real client: a transient provider error is retried on a new session.
            runClassification([{ id: 'same', raw: async () => mail('same') }], {
              connect: async (remaining) => {
                const s = ready[i] ?? (await c.connect(remaining));
                ready[i] = undefined;
                return s;
              },
              onOutcome: (o) => void outcomes.push(o),
            }),
          ),
        );
        assert.deepEqual(
          outcomes.map((o) => o.kind).sort(),
          ['already_classified', 'verdict'],
          JSON.stringify(outcomes),
        );
      });

      test("a user's rate limit counts requests at both instances together", async () => {
        // Fixed one-minute windows: a run that straddles a window boundary is repeated.
        for (let attempt = 1; ; attempt++) {
          const ids = Array.from({ length: RATE + 1 }, (_, i) => `r${i}`);
          const token = await provision(`bob${attempt}`, ids);
          const minute = Math.floor(Date.now() / 60_000);
          // A session's set-up (base OTs, and one extension sized for every
          // message, so no top-up is needed later) is paid for by its hello.
          const sessions = await Promise.all(
            cluster.instances.map((inst, i) => connector(inst.url, token, `bob${attempt}-${i}`).connect(ids.length)),
          );
          let accepted = 0;
          let limited: unknown;
          try {
            for (let i = 0; i < ids.length && !limited; i++) {
              try {
                await sessions[i % 2].classify(ids[i], mail(ids[i]), ids.length - i);
                accepted++;
              } catch (e) {
                // A refused spam request is kept for a re-send (exactly-once); the refusal is its reason.
                if (e instanceof InterruptedRequest) e.dispose();
                limited = e instanceof InterruptedRequest ? e.reason : e;
              }
            }
          } finally {
            for (const s of sessions) s.close();
          }
          if (Math.floor(Date.now() / 60_000) !== minute && attempt < 3) continue;
          assert.ok(limited instanceof ProtocolError && limited.code === 'rate_limited', String(limited));
          assert.equal(accepted, RATE, `requests accepted by both instances together (limit ${RATE} per minute)`);
          return;
        }
      });

      test('killing an instance under load moves its clients to the other; every message gets exactly one verdict', async () => {
        const users = Array.from({ length: CLIENTS }, (_, c) => ({
          name: `load${c}`,
          ids: Array.from({ length: MESSAGES }, (_, i) => `c${c}m${i}`),
        }));
        const tokens = await cluster.provision(users.map((u) => ({ name: u.name, messages: u.ids })));
        const outcomes = new Map<string, RunOutcome[]>();
        let reconnects = 0;
        const runs = users.map((u) =>
          runClassification(
            u.ids.map((id) => ({ id, raw: async () => mail(id) })),
            {
              connect: (remaining) => connector(cluster.url, tokens.get(u.name)!, u.name).connect(remaining),
              onOutcome: (o) => void outcomes.set(o.messageId, [...(outcomes.get(o.messageId) ?? []), o]),
              onReconnect: () => void reconnects++,
            },
          ),
        );
        const all = Promise.all(runs);
        // Under load: a quarter of the messages classified and both instances holding sessions.
        const loaded = waitFor('a quarter of the verdicts with sessions on both instances', 120_000, async () => {
          if (outcomes.size < (CLIENTS * MESSAGES) / 4) return undefined;
          const active = await Promise.all(cluster.instances.map(activeSessions));
          return active.every((n) => n > 0) ? cluster.instances[0] : undefined;
        });
        const tooLate = all.then(() => Promise.reject(new Error('every message was classified before the kill')));
        const victim = await Promise.race([loaded, tooLate]);
        await cluster.kill(victim);
        await all;

        const store = await cluster.openStore();
        try {
          for (const u of users) {
            const userId = (await store.userId(u.name))!;
            for (const id of u.ids) {
              const got = outcomes.get(id) ?? [];
              assert.deepEqual(
                got.map((o) => o.kind),
                ['verdict'],
                `${id}: ${JSON.stringify(got)}`,
              );
              // Every message ends claimed in the shared store, whichever instance answered.
              assert.ok(await store.isClassified(userId, id), `${id} has a verdict but no claim`);
            }
          }
          assert.ok(reconnects > 0, 'no client noticed the killed instance');
        } finally {
          await store.close();
        }
      });
    },
  );
}

/** pmf_sessions_active of one instance. */
async function activeSessions(inst: { url: string }): Promise<number> {
  const text = await (await fetch(`${inst.url}/metrics`)).text();
  return Number(text.match(/^pmf_sessions_active (\d+)/m)?.[1] ?? 0);
}

describe('connection limits behind HAProxy', () => {
  const PER_MINUTE = 6;
  let limited: Cluster;
  before(async () => {
    limited = await startCluster({
      instances: 2,
      haproxy: true,
      workers: 1,
      limits: { connectionsPerMinutePerAddress: PER_MINUTE },
    });
  });
  after(() => limited?.close());

  test('new connections per address per minute hold across both instances (the shared store counts them)', async () => {
    const wsUrl = `${limited.url.replace(/^http/, 'ws')}/session`;
    // Fixed one-minute windows: a run that straddles a window boundary is repeated.
    for (let attempt = 1; ; attempt++) {
      const minute = Math.floor(Date.now() / 60_000);
      const open: WebSocket[] = [];
      const statuses: number[] = [];
      try {
        // Kept open (waiting for hello), so leastconn spreads them over both instances.
        for (let i = 0; i < 2 * PER_MINUTE; i++) {
          statuses.push(
            await new Promise<number>((resolve, reject) => {
              const ws = new WebSocket(wsUrl);
              ws.once('open', () => {
                open.push(ws);
                resolve(101);
              });
              ws.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
              ws.once('error', reject);
            }),
          );
        }
        const used = await Promise.all(limited.instances.map(sessionsTotal));
        if (Math.floor(Date.now() / 60_000) !== minute && attempt < 3) continue;
        assert.ok(
          used.every((n) => n > 0),
          `both instances took connections: ${used.join(', ')}`,
        );
        assert.deepEqual(
          statuses.filter((x) => x === 101).length,
          PER_MINUTE,
          `accepted by both together: ${statuses.join(' ')}`,
        );
        assert.ok(statuses.every((x) => x === 101 || x === 429));
        return;
      } finally {
        for (const ws of open) ws.close();
      }
    }
  });
});

/** pmf_sessions_total of one instance. */
async function sessionsTotal(inst: { url: string }): Promise<number> {
  const text = await (await fetch(`${inst.url}/metrics`)).text();
  return Number(text.match(/^pmf_sessions_total (\d+)/m)?.[1] ?? 0);
}
