// What the garbled-circuit protocol (wasm/ts/gc.ts) keeps between its
// messages: the client's pending evaluation (its input labels) and the
// provider's argmax decoder (output zero labels and Δ), with the inputs and
// results of both functions and the byte sizes they share.
import type { WasmCore } from './core.js';
import { checkArgmaxShape, checkWidth } from './gc-circuit.js';

/** Bytes of a wire label. */
export const LABEL = 16;
/** The seed the garbler's active input labels are expanded from, sent in their place. */
export const LABEL_SEED = 16;
/** Bytes of each output-label digest in gc_spam. */
export const DIGEST = 8;
/** The function a gc_choice asks for (its first body byte). */
export enum Kind {
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
