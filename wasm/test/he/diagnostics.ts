// Test diagnostics of the lattice layer that need the model key, so no
// product code can reach them: the noise an extraction or an accumulator
// carries (wasm/src/he/client.h, flood_noise and acc_noise).
import type { Accumulator, ClientModel, ClientPublicKey, ProviderKey } from '../../ts/he.js';
import { check } from '../../ts/status.js';

/**
 * The noise of one extraction of coefficient j right after blinding and
 * flooding, before dropping q1 and the key switch, given d_j. A fresh
 * extraction each call.
 */
export function floodNoise(
  model: ClientModel,
  sk: ProviderKey,
  acc: Accumulator,
  j: number,
  d: number,
  pk: ClientPublicKey,
): number {
  const core = model.core;
  const p = model.params;
  const out = core.alloc(8);
  try {
    check(
      core.fn('pmf_he_flood_noise')(sk.live(), model.live(), acc.live(), pk.live(), j, p.T, p.F, d >>> 0, out),
      'noise',
    );
    return new DataView(core.heap.buffer).getFloat64(out, true);
  } finally {
    core.free(out);
  }
}

/** The noise of coefficient j of acc before docs/crypto.md#extraction-pipeline, given d_j. */
export function accumulatorNoise(model: ClientModel, sk: ProviderKey, acc: Accumulator, j: number, d: number): bigint {
  const core = model.core;
  const out = core.alloc(8);
  try {
    check(core.fn('pmf_he_acc_noise')(sk.live(), model.live(), acc.live(), j, model.params.T, d >>> 0, out), 'noise');
    return new DataView(core.heap.buffer).getBigInt64(out, true);
  } finally {
    core.free(out);
  }
}
