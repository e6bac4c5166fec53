// The provider under load: provider-server runs as separate
// processes on loopback (provider-server/test/cluster.ts: tsx, default
// worker count, a shared SQLite store), this process is the load generator.
// Client work is precomputed where the provider cannot tell (bench/load-client.ts):
// one LWE ciphertext per session instead of one per email, and sessions set
// up for the setup rows skip the client's half of the base OTs. Sessions
// start with OT pools of random sizes (TOPUP_EMAILS), and the generator
// evaluates one garbled circuit in CHECK_EVERY. Everything
// the provider does is real: hello, public and user keys, base OTs, OT
// extension, decryption, garbling, the at-most-once claim, rate and key budget.
//
// Rows (targets from the issue as reference):
//   classifications_per_s_200  closed loop, every session sends its next email as soon as it has a verdict
//   p99_ms_200                 paced at the target rate (3,000/s over 200 sessions), from the scheduled send
//                              time to the verdict, so a slow provider is not hidden by late sends
//   sessions_per_s             new sessions (welcome + base-OT reply) with 8 in flight
//   victim_p99_ms_setup_storm  one session paced at 20 emails/s while 40 others set up sessions back to back
//   rss_mb_200                 the provider's largest RSS (VmRSS, worker threads included) during the two 200-session rows
//   scaleout_2_instances_ratio closed-loop throughput of 2 instances behind HAProxy over 1 behind HAProxy
//   rss_mb_otpool_300          the provider's largest RSS while 300 sessions fill their OT pools as far as it lets
//                              them (twice over, closing all between), a fresh provider
//   classifications_per_s_200_postgres  the closed loop on a PostgreSQL store (fsync on, as in production);
//                              its ratio is over classifications_per_s_200 of the same run
//   scaleout_2_instances_ratio_postgres the scale-out row on a PostgreSQL store
// --quick runs the same rows with fewer sessions (the note says how many)
// and scales the paced rate with them (15 emails/s per session either way).
import os from 'node:os';
import { USER_KEY_BUDGET_MAX } from '../../provider-server/src/limits.js';
import { rssMb, startCluster } from '../../provider-server/test/cluster.js';
import { postgresMissing, startPostgres, type TestPostgres } from '../../provider-server/test/postgres.js';
import { loadHe, type He } from '../../wasm/ts/he.js';
import type { BenchContext } from '../lib.js';
import { cpuNote } from '../load-cpu.js';
import {
  closeAll,
  closedLoop,
  LIMITS,
  p99,
  paced,
  prepare,
  ready,
  sessionRate,
  setUp,
  SETUP_IN_FLIGHT,
  throughputBehindHaproxy,
  withLogs,
  type Sizes,
} from '../load-loops.js';
import { otPoolRow } from '../load-otpool.js';

const TARGET = { perS: 3000, p99Ms: 50, sessionsPerS: 100, victimP99Ms: 50, rssMb: 400, postgresOverSqlite: 0.8 };
/** The rows of one instance on SQLite, in the order they run on the same sessions. */
const ONE_INSTANCE_ROWS = [
  'classifications_per_s_200',
  'p99_ms_200',
  'rss_mb_200',
  'sessions_per_s',
  'victim_p99_ms_setup_storm',
];
const STORM = 40;
const VICTIM_PER_S = 20;
const FULL: Sizes = {
  sessions: 200,
  otPoolSessions: 300,
  closedMs: 6000,
  pacedMs: 6000,
  setups: 200,
  victimEmails: 100,
  scaleSessions: 64,
  scaleMs: 5000,
};
const QUICK: Sizes = {
  sessions: 12,
  otPoolSessions: 30,
  closedMs: 1500,
  pacedMs: 2000,
  setups: 6,
  victimEmails: 20,
  scaleSessions: 6,
  scaleMs: 1500,
};

/** Whether the run asked for `row` (bench/lib.ts: every row unless --rows names others). */
const wants = (ctx: BenchContext, row: string): boolean => ctx.wants?.(row) ?? true;

export default async function load(ctx: BenchContext): Promise<void> {
  const z = ctx.quick ? QUICK : FULL;
  const he = await loadHe();
  const sqlitePerS = await oneInstance(ctx, z, he);
  const postgresRows = ['classifications_per_s_200_postgres', 'scaleout_2_instances_ratio_postgres'];
  const missing = postgresMissing();
  if (missing && postgresRows.some((r) => wants(ctx, r))) console.error(`load: no PostgreSQL rows: ${missing}`);
  const postgres =
    !missing && postgresRows.some((r) => wants(ctx, r)) ? await startPostgres({ durable: true }) : undefined;
  try {
    if (postgres && wants(ctx, postgresRows[0])) await onPostgres(ctx, z, he, postgres, sqlitePerS);
    if (wants(ctx, 'scaleout_2_instances_ratio')) await scaleout(ctx, z, he);
    if (postgres && wants(ctx, postgresRows[1])) await scaleout(ctx, z, he, postgres);
  } finally {
    await postgres?.stop();
  }
  if (wants(ctx, 'rss_mb_otpool_300'))
    await otPoolRow(ctx, he, { sessions: z.otPoolSessions, limits: LIMITS, inFlight: SETUP_IN_FLIGHT });
}

/** The closed loop of one instance on a PostgreSQL store (a database of its own), beside the SQLite row. */
async function onPostgres(
  ctx: BenchContext,
  z: Sizes,
  he: He,
  postgres: TestPostgres,
  sqlitePerS: number | undefined,
): Promise<void> {
  const cluster = await startCluster({ instances: 1, limits: LIMITS, store: await postgres.database() });
  try {
    const { perS, wholePerS, cpu } = await withLogs(cluster, async () => {
      const ld = await prepare(he, cluster, z.sessions, 'p');
      try {
        return await closedLoop(ld, z.closedMs, USER_KEY_BUDGET_MAX, [cluster.instances[0].pid], postgres.pids);
      } finally {
        closeAll(ld);
      }
    });
    const reference = sqlitePerS === undefined ? undefined : TARGET.postgresOverSqlite * sqlitePerS;
    ctx.report({
      case: 'classifications_per_s_200_postgres',
      metric: 'ops_per_s',
      value: perS,
      unit: 'ops/s',
      ...(sqlitePerS !== undefined && { reference: sqlitePerS, ratio: perS / sqlitePerS }),
      note: `target ≥ ${TARGET.postgresOverSqlite} × classifications_per_s_200 of the same run${reference === undefined ? ' (not run: no ratio)' : ` (${reference.toFixed(0)}/s)`}; ${z.sessions} sessions, closed loop, 1 instance on PostgreSQL 15 (fsync on, same machine); ${closedNote(wholePerS)}; ${cpuNote(cpu, wholePerS)}`,
    });
  } finally {
    await cluster.close();
  }
}

/** How a closed loop's rate was taken (load-loops.ts closedLoop). */
function closedNote(wholePerS: number): string {
  return `rate while every session classified, after a warm-up (${wholePerS.toFixed(0)}/s until the last finished)`;
}

/**
 * The rows of one instance on SQLite, without a load balancer; the closed
 * loop's throughput, when it ran (the PostgreSQL row is compared with it).
 */
async function oneInstance(ctx: BenchContext, z: Sizes, he: He): Promise<number | undefined> {
  const sessions = `${z.sessions} sessions`;
  const closedOnly = !ONE_INSTANCE_ROWS.slice(1).some((r) => wants(ctx, r));
  if (closedOnly && !wants(ctx, ONE_INSTANCE_ROWS[0]) && !wants(ctx, 'classifications_per_s_200_postgres')) return;
  const cluster = await startCluster({ instances: 1, limits: LIMITS });
  try {
    const pid = cluster.instances[0].pid;
    const ld = await prepare(he, cluster, z.sessions + 1, 'u');
    // The setup-storm victim is a user of its own: the rows before it use up the others' key budgets.
    const victim = ld.slots.pop()!;
    let rss = 0;
    let closedPerS: number;
    const sampler = setInterval(() => (rss = Math.max(rss, rssMb(pid))), 100);
    try {
      // The paced row reuses these sessions: together they stay within one user key's budget.
      const pacedPerSession = TARGET.perS / 200;
      const pacedEmails = Math.ceil((pacedPerSession * z.pacedMs) / 1000);
      const { perS, wholePerS, cpu } = await closedLoop(ld, z.closedMs, USER_KEY_BUDGET_MAX - pacedEmails, [pid]);
      closedPerS = perS;
      ctx.report({
        case: 'classifications_per_s_200',
        metric: 'ops_per_s',
        value: perS,
        unit: 'ops/s',
        reference: TARGET.perS,
        ratio: perS / TARGET.perS,
        note: `target ≥ ${TARGET.perS}/s; ${sessions}, closed loop, 1 instance; ${closedNote(wholePerS)}; ${cpuNote(cpu, wholePerS)}`,
      });
      if (closedOnly) {
        ld.slots.push(victim);
        closeAll(ld);
        return closedPerS;
      }
      const offered = pacedPerSession * z.sessions;
      const row = await paced(ld, ld.slots, pacedPerSession, z.pacedMs, [pid]);
      const p = p99(row.latencies);
      ctx.report({
        case: 'p99_ms_200',
        metric: 'time_ms',
        value: p,
        unit: 'ms',
        reference: TARGET.p99Ms,
        ratio: p / TARGET.p99Ms,
        note: `target ≤ ${TARGET.p99Ms} ms; ${sessions} at ${pacedPerSession}/s each (${offered}/s offered; a lower bound past ${(2 * z.pacedMs) / 1000} s); ${cpuNote(row.cpu, offered)}`,
      });
      rss = Math.max(rss, rssMb(pid));
    } finally {
      clearInterval(sampler);
    }
    ctx.report({
      case: 'rss_mb_200',
      metric: 'rss_mb',
      value: rss,
      unit: 'MiB',
      reference: TARGET.rssMb,
      ratio: rss / TARGET.rssMb,
      note: `target ≤ ${TARGET.rssMb} MiB; largest provider VmRSS with ${sessions} open`,
    });

    const spm = await sessionRate(ld, z.setups);
    ctx.report({
      case: 'sessions_per_s',
      metric: 'ops_per_s',
      value: spm,
      unit: 'ops/s',
      reference: TARGET.sessionsPerS,
      ratio: spm / TARGET.sessionsPerS,
      note: `target ≥ ${TARGET.sessionsPerS}/s; hello + base OTs, ${SETUP_IN_FLIGHT} in flight, returning users holding their key (their first session untimed)`,
    });

    const stormers = ld.slots;
    await ready(ld, victim, z.victimEmails); // before the storm: only its emails are timed
    let storming = true;
    // Setups still queued when the victim is done fail when the provider stops: not counted.
    const storm = Promise.all(
      Array.from({ length: STORM }, async (_, i) => {
        while (storming) await setUp(ld, stormers[i % stormers.length]).catch((e) => storming && Promise.reject(e));
      }),
    );
    let lat: number[];
    try {
      ({ latencies: lat } = await paced(ld, [victim], VICTIM_PER_S, (z.victimEmails * 1000) / VICTIM_PER_S));
    } finally {
      storming = false;
    }
    const vp = p99(lat);
    ctx.report({
      case: 'victim_p99_ms_setup_storm',
      metric: 'time_ms',
      value: vp,
      unit: 'ms',
      reference: TARGET.victimP99Ms,
      ratio: vp / TARGET.victimP99Ms,
      note: `target ≤ ${TARGET.victimP99Ms} ms; ${z.victimEmails} emails at ${VICTIM_PER_S}/s while ${STORM} sessions set up (a lower bound past ${(2 * z.victimEmails) / VICTIM_PER_S} s)`,
    });
    ld.slots.push(victim);
    closeAll(ld);
    await cluster.close();
    await storm;
    return closedPerS;
  } finally {
    await cluster.close();
  }
}

/** The scale-out row, on the shared SQLite file or, given a PostgreSQL server, on a database of its own per run. */
async function scaleout(ctx: BenchContext, z: Sizes, he: He, postgres?: TestPostgres): Promise<void> {
  const one = await throughputBehindHaproxy(he, 1, z, await postgres?.database());
  const two = await throughputBehindHaproxy(he, 2, z, await postgres?.database());
  ctx.report({
    case: postgres ? 'scaleout_2_instances_ratio_postgres' : 'scaleout_2_instances_ratio',
    metric: 'ratio',
    value: two.perS / one.perS,
    unit: 'x',
    note: `${two.perS.toFixed(0)}/s (${two.errors} provider errors) over ${one.perS.toFixed(0)}/s, ${z.scaleSessions} sessions each, ${postgres ? 'a PostgreSQL 15 store (fsync on), ' : ''}same ${os.availableParallelism()}-core machine: instances, generator${postgres ? ' and PostgreSQL' : ''} share its cores, so the ratio is a floor`,
  });
}
