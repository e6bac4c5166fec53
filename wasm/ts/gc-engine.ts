// The machinery under the garbled-circuit protocol (wasm/ts/gc.ts): reading
// gc_choice, garbling and evaluating a circuit in the wasm core, the label
// hash, and the cache of circuits loaded into wasm memory.
import type { WasmCore } from './core.js';
import type { Circuit } from './gc-circuit.js';
import { Kind, LABEL, LABEL_SEED } from './gc-state.js';
import type { OtSender } from './ot.js';
import { ProtocolError, Reader, Tag, randomBytes, unpackBits } from './ot-wire.js';
import { check } from './status.js';

/** Little-endian bits of each value (width bits), one per byte, concatenated. */
export function valueBits(values: number[], width: number): Uint8Array {
  const out = new Uint8Array(values.length * width);
  values.forEach((v, j) => {
    for (let i = 0; i < width; i++) out[j * width + i] = (v >>> i) & 1;
  });
  return out;
}

/** Parses gc_choice against the expected shape; takes the OT rows it names. */
export function readChoice(
  sender: OtSender,
  msg: Uint8Array,
  kind: Kind,
  T: number,
  n: number,
  K: number,
): { rows: Uint8Array; flips: Uint8Array } {
  const r = new Reader(msg, 'gc_choice').header(Tag.GcChoice);
  if (r.u8() !== kind) throw new ProtocolError('gc_choice: wrong function for this request');
  const offset = r.u32();
  if (r.u8() !== T || r.u16() !== n || r.u8() !== K)
    throw new ProtocolError('gc_choice: shape does not match the request');
  const nbits = n * (T + K);
  r.expectRemaining((nbits + 7) >> 3);
  const flips = unpackBits(r.bytes((nbits + 7) >> 3), nbits, 'gc_choice');
  return { rows: sender.take(offset, nbits), flips };
}

export interface Garbled {
  tweak: number;
  tables: Uint8Array;
  /** What the evaluator expands the garbler's active input labels from (garblerLabels). */
  labelSeed: Uint8Array;
  outZero: Uint8Array;
}

/**
 * The garbler's n active input labels from the seed a gc message carries in
 * their place (docs/security.md#garbler-input-labels-as-a-seed): 16 bytes on the wire
 * instead of 16 per input bit.
 */
export function garblerLabels(core: WasmCore, seed: Uint8Array, n: number): Uint8Array {
  return core.withBuffers([seed], (ps) => {
    const po = core.alloc(n * LABEL);
    try {
      core.fn('pmf_gc_garbler_labels')(ps, n, po);
      return core.copyOut(po, n * LABEL);
    } finally {
      core.wipeAndFree(po, n * LABEL);
    }
  });
}

/**
 * Garbles with fresh garbler-input active labels (expanded inside the core
 * from a fresh seed) and the evaluator's zero labels q_j XOR e_j·Δ; returns
 * tables, the seed and the output zero labels.
 */
export function garble(
  sender: OtSender,
  circuit: Circuit,
  garblerBits: Uint8Array,
  choice: { rows: Uint8Array; flips: Uint8Array },
): Garbled {
  const core = sender.core;
  const tweak = sender.reserveTweaks(2 * circuit.andCount + 1);
  const ng = garblerBits.length;
  const tablesLen = 32 * circuit.andCount;
  const outLen = tablesLen + LABEL * circuit.outputs.length;
  const pc = circuits.pointer(core, circuit);
  const seed = randomBytes(LABEL_SEED);
  try {
    const inputs = [sender.delta(), seed, garblerBits, choice.rows, choice.flips];
    const out = core.withBuffers(inputs, (pd, ps, pg, pq, pe) => {
      const po = core.alloc(outLen);
      try {
        const rc = core.fn('pmf_gc_garble')(
          pc,
          circuit.bytes.length,
          pd,
          ps,
          ng,
          pg,
          pq,
          pe,
          ...split(tweak),
          po,
          po + tablesLen,
        );
        check(rc, 'garbling');
        return core.copyOut(po, outLen);
      } finally {
        core.wipeAndFree(po, outLen);
      }
    });
    return { tweak, tables: out.subarray(0, tablesLen), labelSeed: seed, outZero: out.subarray(tablesLen) };
  } catch (e) {
    seed.fill(0);
    throw e;
  } finally {
    garblerBits.fill(0);
    choice.rows.fill(0);
  }
}

/** A tweak as the (low, high) 32-bit halves the core takes. */
function split(tweak: number): [number, number] {
  return [tweak % 2 ** 32, Math.floor(tweak / 2 ** 32)];
}

export function evaluate(
  core: WasmCore,
  circuit: Circuit,
  tweak: number,
  tables: Uint8Array,
  gLabels: Uint8Array,
  eLabels: Uint8Array,
): Uint8Array {
  const nout = circuit.outputs.length;
  const pc = circuits.pointer(core, circuit);
  const inputs = new Uint8Array(gLabels.length + eLabels.length);
  inputs.set(gLabels);
  inputs.set(eLabels, gLabels.length);
  eLabels.fill(0);
  try {
    return core.withBuffers([inputs, tables], (pin, pt) => {
      const po = core.alloc(nout * LABEL);
      try {
        const rc = core.fn('pmf_gc_evaluate')(pc, circuit.bytes.length, pin, ...split(tweak), pt, po);
        check(rc, 'evaluation');
        return core.copyOut(po, nout * LABEL);
      } finally {
        core.wipeAndFree(po, nout * LABEL);
      }
    });
  } finally {
    inputs.fill(0);
  }
}

/** H(label, tweak) with the garbling hash. */
export function hashLabels(core: WasmCore, label: Uint8Array, tweak: number): Uint8Array {
  return core.withBuffers([label], (pl) => {
    const po = core.alloc(LABEL);
    try {
      core.fn('pmf_gc_hash')(pl, 1, ...split(tweak), po);
      return core.copyOut(po, LABEL);
    } finally {
      core.wipeAndFree(po, LABEL);
    }
  });
}

export function xor(a: Uint8Array, b: Uint8Array): Uint8Array {
  return a.map((x, i) => x ^ b[i]);
}

/**
 * Circuits by shape, with their copy in WASM memory. Bounded (least recently
 * used out), since a client's request picks the shape.
 */
class CircuitCache {
  private readonly byKey = new Map<string, Circuit>();
  private readonly ptrs = new Map<Circuit, { core: WasmCore; ptr: number }>();

  constructor(private readonly max: number) {}

  get(key: string, build: () => Circuit): Circuit {
    let c = this.byKey.get(key);
    if (c) {
      this.byKey.delete(key);
    } else {
      c = build();
      if (this.byKey.size >= this.max) this.evict(this.byKey.keys().next().value!);
    }
    this.byKey.set(key, c);
    return c;
  }

  pointer(core: WasmCore, c: Circuit): number {
    let p = this.ptrs.get(c);
    if (!p || p.core !== core) {
      const ptr = core.copyIn(c.bytes);
      check(core.fn('pmf_gc_circuit_check')(ptr, c.bytes.length), 'circuit');
      p = { core, ptr };
      this.ptrs.set(c, p);
    }
    return p.ptr;
  }

  private evict(key: string): void {
    const c = this.byKey.get(key)!;
    this.byKey.delete(key);
    const p = this.ptrs.get(c);
    if (p) p.core.free(p.ptr);
    this.ptrs.delete(c);
  }
}

export const circuits = new CircuitCache(32);

export function checkValue(v: number, bits: number, what: string): void {
  if (!Number.isInteger(v) || v < 0 || v >= 2 ** bits)
    throw new RangeError(`${what} must be an integer in [0, 2^${bits})`);
}
