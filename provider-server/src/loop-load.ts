// Whether this process's event loop is busy, from its utilization (the share
// of time it spent running callbacks rather than waiting for I/O), sampled at
// most every SAMPLE_MS so that asking costs nothing on a hot path.
import { performance } from 'node:perf_hooks';

const SAMPLE_MS = 100;
const BUSY_ABOVE = 0.5;

export class LoopLoad {
  private since = performance.eventLoopUtilization();
  private sampledAt = performance.now();
  private wasBusy = false;

  /** True when the loop was busy more than half of the last sample (about 100 ms). */
  busy(): boolean {
    const now = performance.now();
    if (now - this.sampledAt >= SAMPLE_MS) {
      this.wasBusy = performance.eventLoopUtilization(this.since).utilization > BUSY_ABOVE;
      this.since = performance.eventLoopUtilization();
      this.sampledAt = now;
    }
    return this.wasBusy;
  }
}
