// A search page on a thread of its own, for the search suite's busy row: it
// asks the index's thread a query, waits for the answer, pauses as a user
// typing does, and asks the next one. Each run is timed on the page, from the
// question to the answer, so the time a query waits for the index's thread
// to come free (a writer's synchronous step in progress) is counted, as a
// user meets it; a timer on the index's own thread would start only after.
import { Worker } from 'node:worker_threads';

export interface PageRuns {
  /** Question to answer, ms. */
  runs: number[];
  /** The same less the time the index's thread was runnable but waiting for a CPU (Linux schedstat). */
  runsOnCpu?: number[];
}

const PAGE = `
const { parentPort, workerData } = require('node:worker_threads');
const fs = require('node:fs');
const { queries, pauseMs, tid } = workerData;
// Time the index's thread (the process's main thread) spent runnable but off a CPU, ms.
const waited = () => {
  try {
    return Number(fs.readFileSync('/proc/' + process.pid + '/task/' + tid + '/schedstat', 'utf8').split(' ')[1]) / 1e6;
  } catch {
    return undefined;
  }
};
const runs = [];
const runsOnCpu = [];
let next = 0;
let t0 = 0;
let w0;
const ask = () =>
  setTimeout(() => {
    w0 = waited();
    t0 = performance.now();
    parentPort.postMessage(queries[next++ % queries.length]);
  }, pauseMs);
parentPort.on('message', (more) => {
  const t = performance.now() - t0;
  const w1 = waited();
  runs.push(t);
  if (w0 !== undefined && w1 !== undefined) runsOnCpu.push(t - (w1 - w0));
  if (more) ask();
  else parentPort.postMessage({ runs, runsOnCpu: runsOnCpu.length === runs.length ? runsOnCpu : undefined });
});
ask();
`;

/**
 * Has a page thread ask `queries` in turn, `pauseMs` apart, answered by
 * `search` on this thread, until `done()` says so after an answer.
 */
export function askFromPage(
  queries: readonly string[],
  pauseMs: number,
  search: (query: string) => Promise<unknown>,
  done: () => boolean,
): Promise<PageRuns> {
  // On Linux the main thread's id is the process id.
  const page = new Worker(PAGE, { eval: true, workerData: { queries, pauseMs, tid: process.pid } });
  return new Promise<PageRuns>((resolve, reject) => {
    let finished = false;
    page.on('message', (m: string | PageRuns) => {
      if (typeof m !== 'string') {
        finished = true;
        resolve(m);
        void page.terminate();
        return;
      }
      search(m).then(
        () => page.postMessage(!done()),
        (err: unknown) => {
          reject(err instanceof Error ? err : new Error(String(err)));
          void page.terminate();
        },
      );
    });
    page.on('error', reject);
    page.on('exit', () => finished || reject(new Error('the search page thread stopped')));
  });
}
