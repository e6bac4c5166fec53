// Garbled-circuit protocol for one email (docs/crypto.md#garbled-circuits): the provider
// garbles, the client evaluates. The client's input labels come from the
// session's pool of correlated OTs (wasm/ts/ot.ts): the client sends one bit
// per input bit (e = b XOR c, c its random choice bit), and the provider sets
// that wire's zero label to q_j XOR e·Δ, so the client's row t_j already is
// the label of b and no further OT answer crosses the wire.
//
// Spam:    client spamChoice → gc_choice → provider garbleSpam → gc_spam →
//          client evaluateSpam (decodes the bit itself).
// Topics:  client argmaxChoice → gc_choice → provider garbleArgmax → gc_argmax
//          → client evaluateArgmax → gc_labels → provider decodeArgmaxLabels.
import type { WasmCore } from './core.js';
import { Circuit, argmaxCircuit, checkArgmaxShape, checkWidth, fromBits, spamCircuit } from './gc-circuit.js';
import type { OtReceiver, OtSender } from './ot.js';
import { ProtocolError, Reader, Tag, Writer, randomBytes, unpackBits } from './ot-wire.js';
import { check } from './status.js';

const LABEL = 16;
/** The seed the garbler's active input labels are expanded from, sent in their place. */
const LABEL_SEED = 16;
/** Bytes of each output-label digest in gc_spam. */
const DIGEST = 8;
const enum Kind {
  Spam = 0,
  Argmax = 1,
}

export interface SpamGarblerInput {
  /** The provider's decrypted value y = d + r mod 2^T. */
  y: number;
  T: number;
}

export interface SpamEvaluatorInput {
  /** The client's mask r' = −r mod 2^T. */
  rPrime: number;
  T: number;
}

export interface ArgmaxGarblerInput {
  ys: number[];
  T: number;
  /** Bits of a topic index, ⌈log2 B⌉. */
  indexBits: number;
}

export interface ArgmaxEvaluatorInput {
  rPrimes: number[];
  /** Candidate topic indices S'[j] (the client's secret). */
  indices: number[];
  T: number;
  indexBits: number;
}

export interface SpamResult {
  /** True only for a valid "score ≥ 0" output. */
  spam: boolean;
  /**
   * Local-only: the output label matched neither digest (a faulty or probing
   * garbler). `spam` is then false, exactly as for a valid "not spam"; the
   * caller may log this locally but must not signal it to the provider.
   */
  invalid: boolean;
}

/**
 * An evaluation as the client keeps it on its device while its answer is on
 * the way (client/core/kept-requests.ts): the bit width, for argmax (topics)
 * also the candidate count n and index width K, and the evaluator's input
 * labels, 16 bytes per bit.
 */
export interface KeptEvaluation {
  T: number;
  n?: number;
  K?: number;
  labels: Uint8Array;
}

/** Client state between sending gc_choice and receiving the garbled circuit. */
export class PendingEvaluation {
  constructor(
    readonly core: WasmCore,
    readonly kind: Kind,
    readonly T: number,
    readonly n: number,
    readonly K: number,
    private labels: Uint8Array,
  ) {}

  /** The evaluator's input labels, once. @internal */
  consume(): Uint8Array {
    if (this.labels.length === 0) throw new Error('this evaluation was already used or disposed');
    const l = this.labels;
    this.labels = new Uint8Array(0);
    return l;
  }

  dispose(): void {
    this.labels.fill(0);
    this.labels = new Uint8Array(0);
  }

  /** A copy to keep on the device; this one stays usable. */
  keep(): KeptEvaluation {
    if (this.labels.length === 0) throw new Error('this evaluation was already used or disposed');
    const labels = this.labels.slice();
    return this.kind === Kind.Spam ? { T: this.T, labels } : { T: this.T, n: this.n, K: this.K, labels };
  }

  /** Hands a copy to `store` (which keeps its own) and wipes it after; this one is wiped if storing fails. */
  async keepWith(store: (kept: KeptEvaluation) => Promise<void>): Promise<void> {
    const evaluation = this.keep();
    try {
      await store(evaluation);
    } catch (e) {
      this.dispose();
      throw e;
    } finally {
      evaluation.labels.fill(0);
    }
  }

  /** The evaluation `kept` held, of the kind expected; RangeError when it is not one (a damaged store). */
  static restore(core: WasmCore, kept: KeptEvaluation, kind: 'spam' | 'argmax'): PendingEvaluation {
    const [k, n, K] = kind === 'spam' ? [Kind.Spam, 1, 0] : [Kind.Argmax, kept.n ?? 0, kept.K ?? 0];
    if (kind === 'spam') checkWidth(kept.T);
    else checkArgmaxShape(kept.T, n, K);
    const bytes = n * (kept.T + K) * LABEL;
    if (!(kept.labels instanceof Uint8Array) || kept.labels.length !== bytes)
      throw new RangeError(`a kept ${kind} evaluation has ${bytes} bytes of labels`);
    return new PendingEvaluation(core, k, kept.T, n, K, kept.labels.slice());
  }
}

/** Provider state between garbleArgmax and decodeArgmaxLabels. */
export class ArgmaxDecoder {
  constructor(
    readonly core: WasmCore,
    private zero: Uint8Array,
    private delta: Uint8Array,
  ) {}

  /** Output zero labels and Δ, once. @internal */
  consume(): { zero: Uint8Array; delta: Uint8Array } {
    if (this.zero.length === 0) throw new Error('this argmax decoder was already used or disposed');
    const out = { zero: this.zero, delta: this.delta };
    this.zero = this.delta = new Uint8Array(0);
    return out;
  }

  dispose(): void {
    this.zero.fill(0);
    this.delta.fill(0);
    this.zero = this.delta = new Uint8Array(0);
  }

  /**
   * The decoder as bytes (zero labels ‖ Δ), once: the provider records it with
   * the topic_gc so that topic_labels can be decoded in a later session
   * (docs/protocol.md#exactly-once-verdicts). A provider secret: never sent.
   */
  toBytes(): Uint8Array {
    const { zero, delta } = this.consume();
    const out = new Uint8Array(zero.length + delta.length);
    out.set(zero);
    out.set(delta, zero.length);
    zero.fill(0);
    delta.fill(0);
    return out;
  }

  /** A decoder from toBytes(): K zero labels and Δ, 16 bytes each. */
  static fromBytes(core: WasmCore, bytes: Uint8Array): ArgmaxDecoder {
    if (bytes.length < 2 * LABEL || bytes.length % LABEL !== 0)
      throw new RangeError(`argmax decoder: ${bytes.length} bytes is not K + 1 labels`);
    return new ArgmaxDecoder(core, bytes.slice(0, -LABEL), bytes.slice(-LABEL));
  }
}

// ---- client: choice messages ----

/** Client, spam step 1: takes T OTs and returns gc_choice plus the pending state. */
export function spamChoice(
  receiver: OtReceiver,
  { rPrime, T }: SpamEvaluatorInput,
): { message: Uint8Array; pending: PendingEvaluation } {
  checkWidth(T);
  checkValue(rPrime, T, 'rPrime');
  return choose(receiver, Kind.Spam, T, 1, 0, [valueBits([rPrime], T)]);
}

/** Client, topics step 1: takes n(T + indexBits) OTs and returns gc_choice plus the pending state. */
export function argmaxChoice(
  receiver: OtReceiver,
  { rPrimes, indices, T, indexBits }: ArgmaxEvaluatorInput,
): { message: Uint8Array; pending: PendingEvaluation } {
  const n = rPrimes.length;
  checkArgmaxShape(T, n, indexBits);
  if (indices.length !== n) throw new RangeError(`${n} masks but ${indices.length} candidate indices`);
  rPrimes.forEach((r, j) => checkValue(r, T, `rPrimes[${j}]`));
  indices.forEach((s, j) => checkValue(s, indexBits, `indices[${j}]`));
  return choose(receiver, Kind.Argmax, T, n, indexBits, [valueBits(rPrimes, T), valueBits(indices, indexBits)]);
}

function choose(
  receiver: OtReceiver,
  kind: Kind,
  T: number,
  n: number,
  K: number,
  parts: Uint8Array[],
): { message: Uint8Array; pending: PendingEvaluation } {
  const nbits = n * (T + K);
  const { offset, rows, bits: c } = receiver.take(nbits);
  // e = b XOR c: uniformly random whatever the input, since c is.
  const e = new Uint8Array((nbits + 7) >> 3);
  let k = 0;
  for (const part of parts) {
    for (let i = 0; i < part.length; i++, k++) e[k >> 3] |= (part[i] ^ c[k]) << (k & 7);
    part.fill(0);
  }
  c.fill(0);
  const message = new Writer(2 + 1 + 4 + 1 + 2 + 1 + e.length, Tag.GcChoice)
    .u8(kind)
    .u32(offset)
    .u8(T)
    .u16(n)
    .u8(K)
    .bytes(e)
    .done();
  return { message, pending: new PendingEvaluation(receiver.core, kind, T, n, K, rows) };
}

/** Little-endian bits of each value (width bits), one per byte, concatenated. */
function valueBits(values: number[], width: number): Uint8Array {
  const out = new Uint8Array(values.length * width);
  values.forEach((v, j) => {
    for (let i = 0; i < width; i++) out[j * width + i] = (v >>> i) & 1;
  });
  return out;
}

// ---- provider: garbling ----

/** Provider, spam: garbles for the client's gc_choice and returns gc_spam. */
export function garbleSpam({ y, T }: SpamGarblerInput, sender: OtSender, choice: Uint8Array): Uint8Array {
  const core = sender.core;
  checkWidth(T);
  checkValue(y, T, 'y');
  const ot = readChoice(sender, choice, Kind.Spam, T, 1, 0);
  const circuit = circuits.get(`spam:${T}`, () => spamCircuit(T));
  const g = garble(sender, circuit, valueBits([y], T), ot);
  try {
    const outTweak = g.tweak + 2 * circuit.andCount;
    const one = xor(g.outZero, sender.delta());
    const d0 = hashLabels(core, g.outZero, outTweak).subarray(0, DIGEST);
    const d1 = hashLabels(core, one, outTweak).subarray(0, DIGEST);
    one.fill(0);
    return new Writer(2 + 1 + 8 + g.tables.length + LABEL_SEED + 2 * DIGEST, Tag.GcSpam)
      .u8(T)
      .u53(g.tweak)
      .bytes(g.tables)
      .bytes(g.labelSeed)
      .bytes(d0)
      .bytes(d1)
      .done();
  } finally {
    g.outZero.fill(0);
    g.labelSeed.fill(0);
  }
}

/** Provider, topics: garbles for the client's gc_choice; returns gc_argmax and the decoder to keep. */
export function garbleArgmax(
  { ys, T, indexBits }: ArgmaxGarblerInput,
  sender: OtSender,
  choice: Uint8Array,
): { message: Uint8Array; decoder: ArgmaxDecoder } {
  const core = sender.core;
  const n = ys.length;
  checkArgmaxShape(T, n, indexBits);
  ys.forEach((y, j) => checkValue(y, T, `ys[${j}]`));
  const ot = readChoice(sender, choice, Kind.Argmax, T, n, indexBits);
  const circuit = circuits.get(`argmax:${T}:${n}:${indexBits}`, () => argmaxCircuit(T, n, indexBits));
  const g = garble(sender, circuit, valueBits(ys, T), ot);
  const message = new Writer(2 + 1 + 2 + 1 + 8 + g.tables.length + LABEL_SEED, Tag.GcArgmax)
    .u8(T)
    .u16(n)
    .u8(indexBits)
    .u53(g.tweak)
    .bytes(g.tables)
    .bytes(g.labelSeed)
    .done();
  const decoder = new ArgmaxDecoder(core, g.outZero.slice(), sender.delta().slice());
  g.outZero.fill(0);
  g.labelSeed.fill(0);
  return { message, decoder };
}

/**
 * Provider, topics: decodes gc_labels into the chosen topic index. Each label
 * must equal one of the two labels of its wire (constant-time comparison);
 * otherwise the evaluation is rejected with a ProtocolError.
 */
export function decodeArgmaxLabels(decoder: ArgmaxDecoder, labelsMsg: Uint8Array): number {
  const core = decoder.core;
  const { zero, delta } = decoder.consume();
  try {
    const K = zero.length / LABEL;
    const r = new Reader(labelsMsg, 'gc_labels').header(Tag.GcLabels);
    if (r.u8() !== K) throw new ProtocolError('gc_labels: wrong number of output labels');
    r.expectRemaining(K * LABEL);
    const labels = r.bytes(K * LABEL);
    const { valid, bits } = core.withBuffers([labels, zero, delta, new Uint8Array(K)], (pl, pz, pd, pb) => ({
      valid: core.fn('pmf_gc_decode_labels')(pl, pz, pd, K, pb) === 1,
      bits: core.copyOut(pb, K),
    }));
    if (!valid)
      throw new ProtocolError(
        'gc_labels: an output label is not one of the garbler\u2019s labels; evaluation rejected',
      );
    return fromBits(bits);
  } finally {
    zero.fill(0);
    delta.fill(0);
  }
}

// ---- client: evaluation ----

/** Client, spam step 2: evaluates gc_spam and decodes the bit locally. */
export function evaluateSpam(pending: PendingEvaluation, gcMsg: Uint8Array): SpamResult {
  const core = pending.core;
  if (pending.kind !== Kind.Spam) throw new Error('evaluateSpam needs the state from spamChoice');
  const T = pending.T;
  const circuit = circuits.get(`spam:${T}`, () => spamCircuit(T));
  const r = new Reader(gcMsg, 'gc_spam').header(Tag.GcSpam);
  if (r.u8() !== T) throw new ProtocolError('gc_spam: bit width does not match the request');
  const tweak = r.u53();
  r.expectRemaining(32 * circuit.andCount + LABEL_SEED + 2 * DIGEST);
  const tables = r.bytes(32 * circuit.andCount);
  const gLabels = garblerLabels(core, r.bytes(LABEL_SEED), T);
  const d0 = r.bytes(DIGEST);
  const d1 = r.bytes(DIGEST);
  const out = evaluate(core, circuit, tweak, tables, gLabels, pending.consume());
  const h = hashLabels(core, out, tweak + 2 * circuit.andCount).subarray(0, DIGEST);
  out.fill(0);
  const is1 = core.ctEqual(h, d1);
  const is0 = core.ctEqual(h, d0);
  return { spam: is1 && !is0, invalid: is0 === is1 };
}

/** Client, topics step 2: evaluates gc_argmax and returns gc_labels for the provider. */
export function evaluateArgmax(pending: PendingEvaluation, gcMsg: Uint8Array): Uint8Array {
  const core = pending.core;
  if (pending.kind !== Kind.Argmax) throw new Error('evaluateArgmax needs the state from argmaxChoice');
  const { T, n, K } = pending;
  const circuit = circuits.get(`argmax:${T}:${n}:${K}`, () => argmaxCircuit(T, n, K));
  const r = new Reader(gcMsg, 'gc_argmax').header(Tag.GcArgmax);
  if (r.u8() !== T || r.u16() !== n || r.u8() !== K)
    throw new ProtocolError('gc_argmax: shape does not match the request');
  const tweak = r.u53();
  r.expectRemaining(32 * circuit.andCount + LABEL_SEED);
  const tables = r.bytes(32 * circuit.andCount);
  const gLabels = garblerLabels(core, r.bytes(LABEL_SEED), n * T);
  const out = evaluate(core, circuit, tweak, tables, gLabels, pending.consume());
  try {
    return new Writer(2 + 1 + out.length, Tag.GcLabels).u8(K).bytes(out).done();
  } finally {
    out.fill(0);
  }
}

// ---- internals ----

/** Parses gc_choice against the expected shape; takes the OT rows it names. */
function readChoice(
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

interface Garbled {
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
function garblerLabels(core: WasmCore, seed: Uint8Array, n: number): Uint8Array {
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
function garble(
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

function evaluate(
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
function hashLabels(core: WasmCore, label: Uint8Array, tweak: number): Uint8Array {
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

function xor(a: Uint8Array, b: Uint8Array): Uint8Array {
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

const circuits = new CircuitCache(32);

function checkValue(v: number, bits: number, what: string): void {
  if (!Number.isInteger(v) || v < 0 || v >= 2 ** bits)
    throw new RangeError(`${what} must be an integer in [0, 2^${bits})`);
}
