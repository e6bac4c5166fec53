// The load bench's rss_mb_otpool_300 (suites/load.ts): the provider's memory
// for unused OTs under sessions that fill their pools as far as it lets
// them (fillOtPool), measured on a fresh provider process.
import path from 'node:path';
import { ensurePackage } from '../client/core/download.js';
import { loadModel } from '../client/core/provider-session.js';
import { DirectoryStorage } from '../client/node/node-storage.js';
import type { ServerLimits } from '../provider-server/src/limits.js';
import { rssMb, startCluster } from '../provider-server/test/cluster.js';
import { DEFAULT_MAX_FRAME_BYTES } from '../protocol/limits.js';
import type { He } from '../wasm/ts/he.js';
import { maxExtendWithin } from '../wasm/ts/ot.js';
import type { BenchContext } from './lib.js';
import { fillOtPool, inFlight } from './load-client.js';

const TARGET_MB = 600;
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * OT pool memory: `sessions` sessions at once, each filling its OT
 * pool with the largest extensions until it holds two batches or the
 * provider refuses one; all close; the same again, so that memory not
 * returned or reused shows as growth.
 */
export async function otPoolRow(
  ctx: BenchContext,
  he: He,
  opts: { sessions: number; limits: Partial<ServerLimits>; inFlight: number },
): Promise<void> {
  const n = opts.sessions;
  const cluster = await startCluster({ instances: 1, limits: opts.limits });
  try {
    const pid = cluster.instances[0].pid;
    const names = Array.from({ length: n }, (_, i) => `pool${i}`);
    const tokens = await cluster.provision(names.map((name) => ({ name, messages: [] })));
    const pkg = await ensurePackage({
      baseUrl: cluster.url,
      modelId: 'spam',
      storage: new DirectoryStorage(path.join(cluster.dir, 'client')),
    });
    const model = loadModel(he, pkg);
    const url = `${cluster.url.replace(/^http/, 'ws')}/session`;
    const start = rssMb(pid);
    let rss = start;
    const sampler = setInterval(() => (rss = Math.max(rss, rssMb(pid))), 100);
    const after: number[] = [];
    let ots = 0;
    let refused = 0;
    try {
      for (let round = 0; round < 2; round++) {
        const open: Awaited<ReturnType<typeof fillOtPool>>[] = [];
        await inFlight(
          opts.inFlight,
          names.map((name) => async () => {
            const s = await fillOtPool(he, url, tokens.get(name)!, model);
            open.push(s);
            ots += s.ots;
            if (s.refused) refused++;
          }),
        );
        rss = Math.max(rss, rssMb(pid));
        for (const s of open) s.close();
        await sleep(3000); // the sessions end and their pools are dropped
        after.push(rssMb(pid));
      }
    } finally {
      clearInterval(sampler);
      model.model.dispose();
    }
    const mib = (ots * 16) / 2 ** 20 / 2;
    ctx.report({
      case: 'rss_mb_otpool_300',
      metric: 'rss_mb',
      value: rss,
      unit: 'MiB',
      reference: TARGET_MB,
      ratio: rss / TARGET_MB,
      note: `target ≤ ${TARGET_MB} MiB; largest provider VmRSS (${start.toFixed(0)} MiB at start) while ${n} sessions at once fill their OT pools (two batches of ${maxExtendWithin(DEFAULT_MAX_FRAME_BYTES)} OTs asked each), twice over; the provider took ${mib.toFixed(0)} MiB of OTs a round and refused ${refused} sessions' extensions; ${after.map((a) => a.toFixed(0)).join(' and ')} MiB once each round's sessions closed`,
    });
  } finally {
    await cluster.close();
  }
}
