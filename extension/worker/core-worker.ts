// Dedicated worker that owns the WASM core, so long crypto never blocks a page
// or the background. For now it answers one request: a self-test proving the
// module instantiated and its exports run (issue 2's browser proof).
import { ABI_VERSION, loadCore } from '../../wasm/ts/core.js';
import type { CoreSelfTest } from '../lib/core-status.js';

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

self.onmessage = async (ev: MessageEvent<{ type: string }>) => {
  if (ev.data?.type !== 'self-test') return;
  try {
    self.postMessage({ type: 'self-test', result: await selfTest() });
  } catch (e) {
    self.postMessage({ type: 'self-test', error: e instanceof Error ? e.message : String(e) });
  }
};
