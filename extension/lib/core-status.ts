// Starts the WASM worker and runs its self-test; the settings page says in a
// line whether the search and spam engine works, with the test's figures
// behind a disclosure.
import { t } from './i18n.js';

export interface CoreSelfTest {
  ok: boolean;
  abiVersion: number;
  expectedAbi: number;
  /** pmf_ct_memeq on two equal random buffers (must be true). */
  ctMemeqSame: boolean;
  /** pmf_ct_memeq after flipping one bit (must be false). */
  ctMemeqFlipped: boolean;
  loadMs: number;
}

export function startCoreWorker(): Worker {
  return new Worker(/* webpackChunkName: "core-worker" */ new URL('../worker/core-worker.ts', import.meta.url));
}

export function runCoreSelfTest(worker: Worker, timeoutMs = 20_000): Promise<CoreSelfTest> {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(t('engine_no_answer', timeoutMs))), timeoutMs);
    worker.onmessage = (ev: MessageEvent<{ type: string; result?: CoreSelfTest; error?: string }>) => {
      if (ev.data.type !== 'self-test') return;
      clearTimeout(timer);
      if (ev.data.result) resolve(ev.data.result);
      else reject(new Error(ev.data.error ?? t('engine_worker_failed')));
    };
    worker.onerror = (ev) => {
      clearTimeout(timer);
      reject(new Error(t('engine_crashed', ev.message || t('engine_unknown_error'))));
    };
    worker.postMessage({ type: 'self-test' });
  });
}

/** The line for the user. */
export function describeSelfTest(r: CoreSelfTest): string {
  return t(r.ok ? 'engine_ready' : 'engine_failed');
}

/** The figures, for a bug report. */
export function selfTestDetail(r: CoreSelfTest): string {
  return `WASM core ${r.ok ? 'OK' : 'FAILED'}: abi ${r.abiVersion} (expected ${r.expectedAbi}), pmf_ct_memeq equal=${r.ctMemeqSame ? 1 : 0} flipped=${r.ctMemeqFlipped ? 1 : 0}, loaded in ${r.loadMs} ms`;
}
