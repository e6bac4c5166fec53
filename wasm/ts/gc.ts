// Garbled-circuit protocol for one email (PROTOCOL.md §3): the provider
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
import { Circuit, argmaxCircuit, fromBits, spamCircuit, toBits } from './gc-circuit.js';
import type { OtReceiver, OtSender } from './ot.js';
import { ProtocolError, Reader, Tag, Writer, packBits, randomBytes, unpackBits } from './ot-wire.js';

const LABEL = 16;
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
}

// ---- client: choice messages ----

/** Client, spam step 1: takes T OTs and returns gc_choice plus the pending state. */
export function spamChoice(
  receiver: OtReceiver,
  { rPrime, T }: SpamEvaluatorInput,
): { message: Uint8Array; pending: PendingEvaluation } {
  checkT(T);
  checkValue(rPrime, T, 'rPrime');
  return choose(receiver, Kind.Spam, T, 1, 0, toBits(rPrime, T));
}

/** Client, topics step 1: takes n(T + indexBits) OTs and returns gc_choice plus the pending state. */
export function argmaxChoice(
  receiver: OtReceiver,
  { rPrimes, indices, T, indexBits }: ArgmaxEvaluatorInput,
): { message: Uint8Array; pending: PendingEvaluation } {
  checkT(T);
  checkIndexBits(indexBits);
  const n = rPrimes.length;
  checkCount(n);
  if (indices.length !== n) throw new RangeError(`${n} masks but ${indices.length} candidate indices`);
  rPrimes.forEach((r, j) => checkValue(r, T, `rPrimes[${j}]`));
  indices.forEach((s, j) => checkValue(s, indexBits, `indices[${j}]`));
  const bits = [...rPrimes.flatMap((r) => toBits(r, T)), ...indices.flatMap((s) => toBits(s, indexBits))];
  return choose(receiver, Kind.Argmax, T, n, indexBits, bits);
}

function choose(
  receiver: OtReceiver,
  kind: Kind,
  T: number,
  n: number,
  K: number,
  bits: number[],
): { message: Uint8Array; pending: PendingEvaluation } {
  const { offset, rows, bits: c } = receiver.take(bits.length);
  const e = packBits(bits.map((b, i) => b ^ c[i]));
  bits.fill(0);
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

// ---- provider: garbling ----

/** Provider, spam: garbles for the client's gc_choice and returns gc_spam. */
export function garbleSpam({ y, T }: SpamGarblerInput, sender: OtSender, choice: Uint8Array): Uint8Array {
  const core = sender.core;
  checkT(T);
  checkValue(y, T, 'y');
  const { evalZero, delta } = readChoice(sender, choice, Kind.Spam, T, 1, 0);
  const circuit = circuits.get(`spam:${T}`, () => spamCircuit(T));
  const g = garble(core, circuit, sender, delta, toBits(y, T), evalZero);
  try {
    const outTweak = g.tweak + 2 * circuit.andCount;
    const one = xor(g.outZero, delta);
    const d0 = hashLabels(core, g.outZero, outTweak).subarray(0, DIGEST);
    const d1 = hashLabels(core, one, outTweak).subarray(0, DIGEST);
    one.fill(0);
    return new Writer(2 + 1 + 8 + g.tables.length + g.inputLabels.length + 2 * DIGEST, Tag.GcSpam)
      .u8(T)
      .u53(g.tweak)
      .bytes(g.tables)
      .bytes(g.inputLabels)
      .bytes(d0)
      .bytes(d1)
      .done();
  } finally {
    g.outZero.fill(0);
  }
}

/** Provider, topics: garbles for the client's gc_choice; returns gc_argmax and the decoder to keep. */
export function garbleArgmax(
  { ys, T, indexBits }: ArgmaxGarblerInput,
  sender: OtSender,
  choice: Uint8Array,
): { message: Uint8Array; decoder: ArgmaxDecoder } {
  const core = sender.core;
  checkT(T);
  checkIndexBits(indexBits);
  const n = ys.length;
  checkCount(n);
  ys.forEach((y, j) => checkValue(y, T, `ys[${j}]`));
  const { evalZero, delta } = readChoice(sender, choice, Kind.Argmax, T, n, indexBits);
  const circuit = circuits.get(`argmax:${T}:${n}:${indexBits}`, () => argmaxCircuit(T, n, indexBits));
  const g = garble(core, circuit, sender, delta, ys.flatMap((y) => toBits(y, T)), evalZero);
  const message = new Writer(2 + 1 + 2 + 1 + 8 + g.tables.length + g.inputLabels.length, Tag.GcArgmax)
    .u8(T)
    .u16(n)
    .u8(indexBits)
    .u53(g.tweak)
    .bytes(g.tables)
    .bytes(g.inputLabels)
    .done();
  return { message, decoder: new ArgmaxDecoder(core, g.outZero, delta.slice()) };
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
    const bits: number[] = [];
    let valid = true;
    for (let k = 0; k < K; k++) {
      const l = labels.subarray(k * LABEL, (k + 1) * LABEL);
      const z = zero.subarray(k * LABEL, (k + 1) * LABEL);
      const one = xor(z, delta);
      const is0 = core.ctEqual(l, z);
      const is1 = core.ctEqual(l, one);
      one.fill(0);
      valid = valid && (is0 || is1);
      bits.push(is1 ? 1 : 0);
    }
    if (!valid) throw new ProtocolError('gc_labels: an output label is not one of the garbler\u2019s labels; evaluation rejected');
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
  r.expectRemaining(32 * circuit.andCount + T * LABEL + 2 * DIGEST);
  const tables = r.bytes(32 * circuit.andCount);
  const gLabels = r.bytes(T * LABEL);
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
  if (r.u8() !== T || r.u16() !== n || r.u8() !== K) throw new ProtocolError('gc_argmax: shape does not match the request');
  const tweak = r.u53();
  r.expectRemaining(32 * circuit.andCount + n * T * LABEL);
  const tables = r.bytes(32 * circuit.andCount);
  const gLabels = r.bytes(n * T * LABEL);
  const out = evaluate(core, circuit, tweak, tables, gLabels, pending.consume());
  try {
    return new Writer(2 + 1 + out.length, Tag.GcLabels).u8(K).bytes(out).done();
  } finally {
    out.fill(0);
  }
}

// ---- internals ----

/** Parses gc_choice against the expected shape; returns the evaluator's zero labels. */
function readChoice(
  sender: OtSender,
  msg: Uint8Array,
  kind: Kind,
  T: number,
  n: number,
  K: number,
): { evalZero: Uint8Array; delta: Uint8Array } {
  const r = new Reader(msg, 'gc_choice').header(Tag.GcChoice);
  if (r.u8() !== kind) throw new ProtocolError('gc_choice: wrong function for this request');
  const offset = r.u32();
  if (r.u8() !== T || r.u16() !== n || r.u8() !== K) throw new ProtocolError('gc_choice: shape does not match the request');
  const nbits = n * (T + K);
  r.expectRemaining((nbits + 7) >> 3);
  const e = unpackBits(r.bytes((nbits + 7) >> 3), nbits, 'gc_choice');
  const q = sender.take(offset, nbits);
  const delta = sender.delta();
  for (let j = 0; j < nbits; j++) {
    const m = -e[j] & 0xff;
    for (let k = 0; k < LABEL; k++) q[j * LABEL + k] ^= delta[k] & m;
  }
  return { evalZero: q, delta };
}

interface Garbled {
  tweak: number;
  tables: Uint8Array;
  inputLabels: Uint8Array;
  outZero: Uint8Array;
}

/** Garbles with fresh garbler-input zero labels; returns tables, active garbler labels and output zero labels. */
function garble(
  core: WasmCore,
  circuit: Circuit,
  sender: OtSender,
  delta: Uint8Array,
  garblerBits: number[],
  evalZero: Uint8Array,
): Garbled {
  const gZero = randomBytes(garblerBits.length * LABEL);
  const inZero = new Uint8Array(gZero.length + evalZero.length);
  inZero.set(gZero);
  inZero.set(evalZero, gZero.length);
  evalZero.fill(0);
  const tweak = sender.reserveTweaks(2 * circuit.andCount + 1);
  const nout = circuit.outputs.length;
  const tablesLen = 32 * circuit.andCount;
  const pc = circuits.pointer(core, circuit);
  try {
    const out = core.withBuffers([delta, inZero], (pd, pin) => {
      const pt = core.alloc(tablesLen + nout * LABEL);
      try {
        const rc = core.fn('pmf_gc_garble')(pc, circuit.bytes.length, pd, pin, tweak % 2 ** 32, Math.floor(tweak / 2 ** 32), pt, pt + tablesLen);
        if (rc !== circuit.andCount) throw new Error(`garbling failed (code ${rc})`);
        return core.copyOut(pt, tablesLen + nout * LABEL);
      } finally {
        core.wipeAndFree(pt, tablesLen + nout * LABEL);
      }
    });
    // Active labels of the garbler's inputs: zero label XOR bit·Δ.
    const inputLabels = gZero;
    garblerBits.forEach((b, i) => {
      const m = -b & 0xff;
      for (let k = 0; k < LABEL; k++) inputLabels[i * LABEL + k] ^= delta[k] & m;
    });
    garblerBits.fill(0);
    return { tweak, tables: out.subarray(0, tablesLen), inputLabels, outZero: out.slice(tablesLen) };
  } finally {
    inZero.fill(0);
  }
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
        const rc = core.fn('pmf_gc_evaluate')(pc, circuit.bytes.length, pin, tweak % 2 ** 32, Math.floor(tweak / 2 ** 32), pt, po);
        if (rc !== circuit.andCount) throw new Error(`evaluation failed (code ${rc})`);
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
      core.fn('pmf_gc_hash')(pl, 1, tweak % 2 ** 32, Math.floor(tweak / 2 ** 32), po);
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
      if (core.fn('pmf_gc_circuit_check')(ptr, c.bytes.length) !== c.andCount) throw new Error('internal: circuit rejected by the core');
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

function checkT(T: number): void {
  if (!Number.isInteger(T) || T < 2 || T > 32) throw new RangeError(`T must be an integer in 2..32, got ${T}`);
}

function checkIndexBits(K: number): void {
  if (!Number.isInteger(K) || K < 1 || K > 16) throw new RangeError(`indexBits must be 1..16, got ${K}`);
}

function checkCount(n: number): void {
  if (!Number.isInteger(n) || n < 1 || n > 4096) throw new RangeError(`argmax needs 1..4096 values, got ${n}`);
}

function checkValue(v: number, bits: number, what: string): void {
  if (!Number.isInteger(v) || v < 0 || v >= 2 ** bits) throw new RangeError(`${what} must be an integer in [0, 2^${bits})`);
}
