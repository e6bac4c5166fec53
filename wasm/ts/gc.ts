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
//
// The state kept between messages is in gc-state.ts, the garbling and
// evaluation machinery in gc-engine.ts.
import { argmaxCircuit, checkArgmaxShape, checkWidth, fromBits, spamCircuit } from './gc-circuit.js';
import {
  checkValue,
  circuits,
  evaluate,
  garble,
  garblerLabels,
  hashLabels,
  readChoice,
  valueBits,
  xor,
} from './gc-engine.js';
import {
  ArgmaxDecoder,
  DIGEST,
  Kind,
  LABEL,
  LABEL_SEED,
  PendingEvaluation,
  type ArgmaxEvaluatorInput,
  type ArgmaxGarblerInput,
  type SpamEvaluatorInput,
  type SpamGarblerInput,
  type SpamResult,
} from './gc-state.js';
import type { OtReceiver, OtSender } from './ot.js';
import { ProtocolError, Reader, Tag, Writer } from './ot-wire.js';

export {
  ArgmaxDecoder,
  PendingEvaluation,
  type ArgmaxEvaluatorInput,
  type ArgmaxGarblerInput,
  type KeptEvaluation,
  type SpamEvaluatorInput,
  type SpamGarblerInput,
  type SpamResult,
} from './gc-state.js';

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
