// Cost of crossing the JS/WASM boundary through the typed wrapper.
import { loadCore } from '../../wasm/ts/core.js';
import { timePerCall, type BenchContext } from '../lib.js';

export default async function wasm(ctx: BenchContext): Promise<void> {
  const core = await loadCore();
  const abi = core.fn('pmf_abi_version');
  const ns = timeCall(() => abi(), ctx.quick);
  ctx.report({
    case: 'call_overhead',
    metric: 'time_ns',
    value: ns,
    unit: 'ns',
    note: 'no-arg export via WasmCore.fn',
  });

  const a = core.randomBytes(32);
  const b = a.slice();
  const eqNs = timeCall(() => core.ctEqual(a, b), ctx.quick);
  ctx.report({ case: 'ct_equal_32B', metric: 'time_ns', value: eqNs, unit: 'ns', note: 'copy-in, compare, wipe' });
}

function timeCall(fn: () => unknown, quick: boolean): number {
  return timePerCall(fn, { batch: 10_000, minMs: quick ? 200 : 1000 });
}
