// CPU accounting of the load bench's classifying rows (suites/load.ts): what
// the provider processes, this generator, a PostgreSQL server and the whole
// machine used over a timed window, and the note a row gives it in.
import fs from 'node:fs';
import os from 'node:os';
import { cpuSeconds } from '../provider-server/test/cluster.js';

/** CPU the providers, this generator and the whole machine used while classifying, in cores (of os.availableParallelism()). */
export interface CpuShare {
  provider: number;
  generator: number;
  /** The PostgreSQL server's processes, on the PostgreSQL rows (on the same cores, as the generator). */
  store?: number;
  /** Every process on the machine (/proc/stat): other tenants, and how hard the host made the same work. */
  machine: number;
}

/**
 * The machine's busy and total CPU time so far (/proc/stat's first line), in
 * USER_HZ ticks. Not os.cpus(): libuv leaves out softirq (loopback TCP's
 * receive work, a large share here) and steal.
 */
function machineTicks(): { busy: number; total: number } {
  const [user, nice, system, idle, iowait, irq, softirq, steal] = fs
    .readFileSync('/proc/stat', 'utf8')
    .split('\n')[0]
    .trim()
    .split(/\s+/)
    .slice(1)
    .map(Number);
  const busy = user + nice + system + irq + softirq + steal;
  return { busy, total: busy + idle + iowait };
}

/** CPU seconds of these processes so far (a process that ended since counts nothing). */
const cpuOf = (pids: number[]): number =>
  pids.reduce((sum, pid) => {
    try {
      return sum + cpuSeconds(pid);
    } catch {
      return sum;
    }
  }, 0);

/**
 * Starts measuring CPU; the returned function ends it. `pids`: the provider
 * processes; `storePids`: the PostgreSQL server's, read at start and end.
 */
export function cpuSince(pids: number[], storePids?: () => number[]): () => CpuShare {
  const providerCpu = () => pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
  const t0 = performance.now();
  const provider0 = providerCpu();
  const storeAtStart = storePids?.();
  const store0 = storeAtStart && cpuOf(storeAtStart);
  const generator0 = process.cpuUsage();
  const machine0 = machineTicks();
  return () => {
    const seconds = (performance.now() - t0) / 1000;
    const generator = process.cpuUsage(generator0);
    const machine = machineTicks();
    const cores = os.availableParallelism();
    return {
      provider: (providerCpu() - provider0) / seconds,
      generator: (generator.user + generator.system) / 1e6 / seconds,
      // Backends of connections opened meanwhile count from zero; none are here (the connections are up).
      ...(storeAtStart && { store: (cpuOf(storeAtStart) - store0!) / seconds }),
      machine: ((machine.busy - machine0.busy) / (machine.total - machine0.total || 1)) * cores,
    };
  };
}

/** What a classifying row's note says about CPU: the generator and the host's other tenants share the provider's cores. */
export function cpuNote(cpu: CpuShare, perS: number): string {
  const cores = os.availableParallelism();
  const perEmail = (c: number) => ((c / perS) * 1000).toFixed(2);
  const store = cpu.store === undefined ? '' : `PostgreSQL ${cpu.store.toFixed(2)} cores (${perEmail(cpu.store)} ms), `;
  return `provider ${cpu.provider.toFixed(2)} cores (${perEmail(cpu.provider)} ms CPU per email), ${store}generator ${cpu.generator.toFixed(2)} cores (${perEmail(cpu.generator)} ms), machine ${cpu.machine.toFixed(2)} cores busy (${perEmail(cpu.machine)} ms, every process), of ${cores}; load average ${os.loadavg()[0].toFixed(1)}`;
}
