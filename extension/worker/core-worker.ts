// Dedicated worker that owns the WASM core, so long crypto never blocks a page
// or the background. It answers a self-test proving the module instantiated
// and its exports run (the browser proof of the one WASM build), and hosts the private
// functions (extension/private/worker-service.ts).
import { ABI_VERSION, loadCore } from '../../wasm/ts/core.js';
import type { CoreSelfTest } from '../lib/core-status.js';
import { serveWorker } from '../private/worker-service.js';
import type { WorkerEnvelope } from '../private/worker-protocol.js';

const servePrivate = serveWorker((msg) => self.postMessage(msg));

async function selfTest(): Promise<CoreSelfTest> {
  const started = performance.now();
  const core = await loadCore();
  const a = core.randomBytes(32);
  const b = a.slice();
  const equalSame = core.ctEqual(a, b);
  b[31] ^= 1;
  const equalFlipped = core.ctEqual(a, b);
  return {
    ok: equalSame && !equalFlipped,
    abiVersion: core.fn('pmf_abi_version')(),
    expectedAbi: ABI_VERSION,
    ctMemeqSame: equalSame,
    ctMemeqFlipped: equalFlipped,
    loadMs: Math.round(performance.now() - started),
  };
}

self.onmessage = async (ev: MessageEvent<{ type?: string } | WorkerEnvelope>) => {
  if (typeof ev.data === 'object' && ev.data !== null && 'request' in ev.data) return servePrivate(ev.data);
  if ((ev.data as { type?: string } | null)?.type !== 'self-test') return;
  try {
    self.postMessage({ type: 'self-test', result: await selfTest() });
  } catch (e) {
    self.postMessage({ type: 'self-test', error: e instanceof Error ? e.message : String(e) });
  }
};
