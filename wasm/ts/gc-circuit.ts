// Boolean circuits for the garbled-circuit layer: a small builder (AND/XOR/NOT
// wires, inputs numbered first) and the two circuits of docs/crypto.md#circuits.
// Circuits serialize to the layout wasm/src/gc/circuit.h reads; `evaluatePlain`
// is the reference the tests compare garbled evaluation against.
import { MAX_T, MIN_T } from './limits.js';

export const enum Op {
  And = 0,
  Xor = 1,
  Not = 2,
}

export type Wire = number;

export class Circuit {
  /** Serialized form handed to the WASM module. */
  readonly bytes: Uint8Array;
  readonly andCount: number;

  constructor(
    readonly garblerInputs: number,
    readonly evaluatorInputs: number,
    readonly nwires: number,
    readonly gates: readonly (readonly [Op, Wire, Wire, Wire])[],
    readonly outputs: readonly Wire[],
  ) {
    const words = new Uint32Array(4 + 4 * gates.length + outputs.length);
    words.set([nwires, garblerInputs + evaluatorInputs, gates.length, outputs.length]);
    gates.forEach((g, i) => words.set(g, 4 + 4 * i));
    words.set(outputs, 4 + 4 * gates.length);
    this.bytes = new Uint8Array(words.buffer);
    this.andCount = gates.filter((g) => g[0] === Op.And).length;
  }

  /** Plaintext evaluation: input bits (garbler's then evaluator's) → output bits. */
  evaluatePlain(inputs: ArrayLike<number>): number[] {
    const w = new Uint8Array(this.nwires);
    w.set(Array.from(inputs, (b) => b & 1));
    for (const [op, a, b, o] of this.gates) {
      w[o] = op === Op.And ? w[a] & w[b] : op === Op.Xor ? w[a] ^ w[b] : w[a] ^ 1;
    }
    return this.outputs.map((o) => w[o]);
  }
}

export class CircuitBuilder {
  private gates: [Op, Wire, Wire, Wire][] = [];
  private next: number;

  constructor(
    private readonly garblerInputs: number,
    private readonly evaluatorInputs: number,
  ) {
    this.next = garblerInputs + evaluatorInputs;
  }

  /** Wires of the garbler's input bits [from, from + n). */
  garbler(from: number, n: number): Wire[] {
    return Array.from({ length: n }, (_, i) => from + i);
  }

  /** Wires of the evaluator's input bits [from, from + n). */
  evaluator(from: number, n: number): Wire[] {
    return Array.from({ length: n }, (_, i) => this.garblerInputs + from + i);
  }

  and(a: Wire, b: Wire): Wire {
    return this.gate(Op.And, a, b);
  }

  xor(a: Wire, b: Wire): Wire {
    return this.gate(Op.Xor, a, b);
  }

  not(a: Wire): Wire {
    return this.gate(Op.Not, a, 0);
  }

  /** sel ? a : b, one AND per bit. */
  mux(sel: Wire, a: Wire[], b: Wire[]): Wire[] {
    return a.map((ai, i) => this.xor(b[i], this.and(sel, this.xor(ai, b[i]))));
  }

  /**
   * Carries out of bits 0..count-1 of x + y + c0 (little-endian bit vectors):
   * result[k] is the carry into bit k + 1. One AND per carry, using
   * c' = c ^ ((x ^ c) & (y ^ c)); c0 = 1 needs no constant wire because the
   * first carry is then x0 | y0 = ~(~x0 & ~y0).
   */
  carries(x: Wire[], y: Wire[], c0: 0 | 1, count: number): Wire[] {
    const out: Wire[] = [];
    let c = c0 === 0 ? this.and(x[0], y[0]) : this.not(this.and(this.not(x[0]), this.not(y[0])));
    out.push(c);
    for (let i = 1; i < count; i++) {
      c = this.xor(c, this.and(this.xor(x[i], c), this.xor(y[i], c)));
      out.push(c);
    }
    return out;
  }

  /** (x + y) mod 2^n, n - 1 ANDs. */
  add(x: Wire[], y: Wire[]): Wire[] {
    const c = this.carries(x, y, 0, x.length - 1);
    return x.map((xi, i) => (i === 0 ? this.xor(xi, y[0]) : this.xor(this.xor(xi, y[i]), c[i - 1])));
  }

  /**
   * Signed (two's complement) a > b in n ANDs: flipping both msbs maps signed
   * to unsigned order, and b' + ~a' + 1 carries out iff b' >= a'.
   */
  signedGreater(a: Wire[], b: Wire[]): Wire {
    const n = a.length;
    const x = b.map((w, i) => (i === n - 1 ? this.not(w) : w));
    const y = a.map((w, i) => (i === n - 1 ? w : this.not(w))); // ~(a with msb flipped)
    return this.not(this.carries(x, y, 1, n)[n - 1]);
  }

  build(outputs: Wire[]): Circuit {
    return new Circuit(this.garblerInputs, this.evaluatorInputs, this.next, this.gates, outputs);
  }

  private gate(op: Op, a: Wire, b: Wire): Wire {
    const o = this.next++;
    this.gates.push([op, a, b, o]);
    return o;
  }
}

/**
 * Spam circuit: garbler y (T bits), evaluator r' (T bits), both little-endian;
 * one output bit NOT msb(y + r' mod 2^T) = "score ≥ 0". T − 1 AND gates.
 */
export function spamCircuit(T: number): Circuit {
  checkWidth(T);
  const b = new CircuitBuilder(T, T);
  const y = b.garbler(0, T);
  const r = b.evaluator(0, T);
  const carryIntoMsb = b.carries(y, r, 0, T - 1)[T - 2];
  const msb = b.xor(b.xor(y[T - 1], r[T - 1]), carryIntoMsb);
  return b.build([b.not(msb)]);
}

/**
 * Topic circuit for n candidates: garbler y_1..y_n (T bits each); evaluator
 * r'_1..r'_n (T bits each) then the candidate indices S'_1..S'_n (K bits
 * each). Output: the K bits of S'[argmax_j (y_j + r'_j)] under signed T-bit
 * comparison; ties go to the first maximum.
 */
export function argmaxCircuit(T: number, n: number, K: number): Circuit {
  checkArgmaxShape(T, n, K);
  const b = new CircuitBuilder(n * T, n * (T + K));
  let best = b.add(b.garbler(0, T), b.evaluator(0, T));
  let bestIdx = b.evaluator(n * T, K);
  for (let j = 1; j < n; j++) {
    const v = b.add(b.garbler(j * T, T), b.evaluator(j * T, T));
    const gt = b.signedGreater(v, best);
    if (j + 1 < n) best = b.mux(gt, v, best);
    bestIdx = b.mux(gt, b.evaluator(n * T + j * K, K), bestIdx);
  }
  return b.build(bestIdx);
}

/** Throws RangeError unless T is a supported bit width (MIN_T..MAX_T). */
export function checkWidth(T: number): void {
  if (!Number.isInteger(T) || T < MIN_T || T > MAX_T)
    throw new RangeError(`T must be an integer in ${MIN_T}..${MAX_T}, got ${T}`);
}

/** Throws RangeError unless (T, n candidates, K index bits) is a supported argmax shape. */
export function checkArgmaxShape(T: number, n: number, K: number): void {
  checkWidth(T);
  if (!Number.isInteger(n) || n < 1 || n > 4096) throw new RangeError(`argmax needs 1..4096 candidates, got ${n}`);
  if (!Number.isInteger(K) || K < 1 || K > 16) throw new RangeError(`indexBits must be 1..16, got ${K}`);
}

/** Little-endian bits of v mod 2^n. */
export function toBits(v: number, n: number): number[] {
  if (n > 32) throw new RangeError('toBits handles at most 32 bits');
  const u = n === 32 ? v >>> 0 : (v >>> 0) & (2 ** n - 1);
  return Array.from({ length: n }, (_, i) => (u >>> i) & 1);
}

/** Unsigned integer from little-endian bits. */
export function fromBits(bits: ArrayLike<number>): number {
  let v = 0;
  for (let i = bits.length - 1; i >= 0; i--) v = v * 2 + (bits[i] & 1);
  return v;
}
