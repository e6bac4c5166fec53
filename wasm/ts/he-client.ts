// The client's side of the lattice layer: the encrypted model, its dot
// product and the extraction of what may leave the device
// (docs/crypto.md#extraction-pipeline), with the session's public key and the
// user's key-switching key. Only the ciphertexts extract() returns may leave
// the client; the accumulator, masks and every intermediate value stay.
import { concatBytes } from '@noble/hashes/utils.js';
import type { WasmCore } from './core.js';
import { Handle, publicInput, u8 } from './he-handle.js';
import {
  A_BYTES_PER_CT,
  packedBytes,
  topicCiphertexts,
  type HeContext,
  type HeLayout,
  type HeParams,
} from './he-params.js';
import { check, CoreError, Status } from './status.js';

export class ClientPublicKey extends Handle {}

/** The client's loaded key-switching key for one plaintext width T (in wasm memory: 160 KiB per digit, NTT and coefficient forms). */
export class ClientKeySwitchKey extends Handle {
  constructor(
    core: WasmCore,
    ptr: number,
    /** The plaintext bits it was made for: it serves only models of that T. */
    readonly T: number,
  ) {
    super(core, ptr, 'pmf_he_ksk_free');
  }

  /** Throws unless this key serves a model with these parameters. */
  checkServes(p: HeParams): void {
    if (this.T !== p.T) throw new Error(`key-switching key: made for T = ${this.T}, the model has T = ${p.T}`);
  }
}

/** Output of ClientModel.dot: stays on the device, never serialized. */
export class Accumulator extends Handle {}

export interface Features {
  /** Feature rows, 1..N (row 0, the bias, is always added with x = 1: do not pass it). */
  rows: Uint32Array;
  /** Counts ≥ 1, same length; capped here at 2^f_in − 1 (docs/crypto.md#dot-product). */
  counts: Uint32Array;
}

export interface Extracted {
  /** Coefficient (category) index j. */
  index: number;
  /** Bit-packed LWE ciphertext: the only thing that leaves the device. */
  lwe: Uint8Array;
  /** r_j in [0, 2^T): the provider decrypts y = d_j + r_j; the client keeps r_j. */
  mask: number;
}

/**
 * The encrypted model on the client. Build it from the package body in chunks
 * of any size (push), then finish(). The a polynomials are expanded from their
 * seeds and held up to a byte limit (He.newClientModel): a dot product expands
 * again only those it could not hold.
 */
export class ClientModel extends Handle {
  private pending = new Uint8Array(0);
  private received = 0;
  private failed = false;
  private readonly layout: Readonly<HeLayout>;

  constructor(
    core: WasmCore,
    ptr: number,
    /** The parameters it was made for: every call uses these, none takes others. */
    readonly context: HeContext,
  ) {
    super(core, ptr, 'pmf_he_model_free');
    this.layout = context.layout;
  }

  get params(): Readonly<HeParams> {
    return this.context.params;
  }

  /** Bytes of expanded a polynomials this model holds now. */
  get aCachedBytes(): number {
    return this.core.fn('pmf_he_model_a_held')(this.live()) * A_BYTES_PER_CT;
  }

  get complete(): boolean {
    return !this.failed && this.received === this.layout.ctCount;
  }

  /** Feeds the next bytes of the model body; every b value is checked < q_i. */
  push(chunk: Uint8Array): void {
    if (this.failed) throw new Error('model body: loading already failed');
    const { recordBytes, ctCount } = this.layout;
    const data = this.pending.length ? concatBytes(this.pending, chunk) : chunk;
    const whole = Math.floor(data.length / recordBytes);
    if (this.received + whole > ctCount) {
      this.failed = true;
      throw new Error(`model body: longer than ${ctCount} ciphertexts (${ctCount * recordBytes} bytes)`);
    }
    const core = this.core;
    const batch = 64;
    for (let first = 0; first < whole; first += batch) {
      const count = Math.min(batch, whole - first);
      const bytes = data.subarray(first * recordBytes, (first + count) * recordBytes);
      const st = core.fn('pmf_he_model_add')(this.live(), publicInput(core, bytes), count);
      if (st !== Status.Ok) {
        this.failed = true;
        check(st, `model body: ciphertext in ${this.received}..${this.received + count - 1}`);
      }
      this.received += count;
    }
    this.pending = data.slice(whole * recordBytes);
  }

  /** Checks the body was complete. */
  finish(): this {
    if (!this.complete || this.pending.length)
      throw new Error(`model body: incomplete (${this.received} of ${this.layout.ctCount} ciphertexts)`);
    return this;
  }

  /**
   * acc = Σ_f x_f·X^{−offset(f)}·ct[f] plus the bias row with x = 1 (docs/crypto.md#dot-product).
   * Cost: one shift-and-add of n coefficients × 2 limbs per feature.
   */
  dot(features: Features): Accumulator {
    const { rows, counts } = features;
    if (!(rows instanceof Uint32Array) || !(counts instanceof Uint32Array) || rows.length !== counts.length)
      throw new Error('features: rows and counts must be Uint32Arrays of equal length');
    const cap = 2 ** this.params.f_in - 1;
    const capped = counts.map((c) => Math.min(c, cap));
    const core = this.core;
    const acc = core.fn('pmf_he_acc_new')();
    if (acc === 0) throw new CoreError(Status.NoMemory, 'dot product');
    const handle = new Accumulator(core, acc, 'pmf_he_acc_free');
    try {
      const st = core.withBuffers([u8(rows), u8(capped)], (rp, cp) =>
        core.fn('pmf_he_dot')(this.live(), rp, cp, rows.length, cap, acc),
      );
      check(st, 'dot product');
    } catch (e) {
      handle.dispose();
      throw e;
    } finally {
      capped.fill(0);
    }
    return handle;
  }

  /**
   * The statistical distance, in units of 2^-128, that `coefficients`
   * extractions of this accumulator give the provider over a view without the
   * email's noise: flood_bound/2^(F+1) each (docs/crypto.md#noise-budget). A
   * device's sum of these stays ≤ 2^-40 (client/core/flood-ledger.ts).
   */
  floodDistance(acc: Accumulator, coefficients = 1): bigint {
    const core = this.core;
    const out = core.alloc(8);
    try {
      core.fn('pmf_he_flood_bound')(acc.live(), out);
      const [lo, hi] = new Uint32Array(core.heap.buffer, out, 2);
      const bound = (BigInt(hi) << 32n) | BigInt(lo);
      return (bound * BigInt(coefficients)) << BigInt(127 - this.params.F);
    } finally {
      core.free(out);
    }
  }

  /**
   * docs/crypto.md#extraction-pipeline for each requested coefficient: fresh public-key encryption of zero,
   * LWE extraction, blinding by Δ·r_j, flooding, switch to 2^Q, bit-packing.
   * Spam: indices [0]. Topics: the B' candidate indices.
   */
  extract(acc: Accumulator, indices: ArrayLike<number>, pk: ClientPublicKey, ksk: ClientKeySwitchKey): Extracted[] {
    const p = this.params;
    ksk.checkServes(p);
    const core = this.core;
    const size = this.layout.lweBytes;
    const out = core.alloc(size);
    const mask = core.alloc(4);
    const accPtr = acc.live();
    const pkPtr = pk.live();
    const kskPtr = ksk.live();
    try {
      return Array.from(indices, (j) => {
        if (!Number.isInteger(j) || j < 0 || j >= p.B) throw new Error(`extract: index ${j} is not in [0, ${p.B})`);
        check(core.fn('pmf_he_extract')(this.live(), accPtr, pkPtr, kskPtr, j, p.T, p.Q, p.F, out, mask), 'extract');
        const r = new DataView(core.heap.buffer).getUint32(mask, true);
        return { index: j, lwe: core.copyOut(out, size), mask: r };
      });
    } finally {
      core.wipeAndFree(mask, 4);
      core.free(out);
    }
  }

  /**
   * docs/crypto.md#packed-extraction: coefficients 0..count−1 (count ≤ B) in one
   * ciphertext, each blinded by its own r_j (masks[j]) and flooded. It links
   * the coefficients, so only for a set the provider may know (every topic).
   */
  extractPacked(
    acc: Accumulator,
    count: number,
    pk: ClientPublicKey,
    ksk: ClientKeySwitchKey,
  ): { ciphertext: Uint8Array; masks: Uint32Array } {
    const p = this.params;
    if (!Number.isInteger(count) || count < 1 || count > p.B)
      throw new Error(`extractPacked: count ${count} is not in [1, ${p.B}]`);
    ksk.checkServes(p);
    const core = this.core;
    const size = packedBytes(p, count);
    const out = core.alloc(size);
    const masks = core.alloc(4 * count);
    try {
      check(
        core.fn('pmf_he_extract_packed')(
          this.live(),
          acc.live(),
          pk.live(),
          ksk.live(),
          count,
          p.T,
          p.Q,
          p.F,
          out,
          masks,
        ),
        'extract',
      );
      return { ciphertext: core.copyOut(out, size), masks: new Uint32Array(core.heap.buffer, masks, count).slice() };
    } finally {
      core.wipeAndFree(masks, 4 * count);
      core.free(out);
    }
  }

  /**
   * What a topic_request carries for the candidate set S' (ascending topic
   * indices) and the blinds r_j in the same order: one packed ciphertext when
   * S' is every topic, else one freshly re-randomized LWE ciphertext per
   * candidate, so that the provider cannot link them to S' (`topicCiphertexts`).
   */
  extractTopics(
    acc: Accumulator,
    set: ArrayLike<number>,
    pk: ClientPublicKey,
    ksk: ClientKeySwitchKey,
  ): { ciphertexts: Uint8Array; masks: Uint32Array } {
    if (!topicCiphertexts(this.params, set.length).packed) {
      const extracted = this.extract(acc, set, pk, ksk);
      const masks = Uint32Array.from(extracted, (e) => e.mask);
      extracted.forEach((e) => (e.mask = 0));
      return { ciphertexts: concatBytes(...extracted.map((e) => e.lwe)), masks };
    }
    if (!Array.from(set).every((j, i) => j === i))
      throw new Error('extractTopics: a full candidate set must be 0..B−1 in order');
    const { ciphertext, masks } = this.extractPacked(acc, set.length, pk, ksk);
    return { ciphertexts: ciphertext, masks };
  }
}
