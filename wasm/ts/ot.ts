// Oblivious transfer for the garbled-circuit layer (docs/crypto.md#oblivious-transfer): once per
// session, 128 base OTs (Chou–Orlandi "simplest OT" over ristretto255 with
// libsodium's WebAssembly build, wasm/ts/ristretto.ts), then IKNP extension batches with the KOS consistency check
// into a pool of random correlated OTs. The provider is the OT sender (its
// base-OT choice string s is the garbling offset Δ); the client is the
// receiver. Message flow (bytes in, bytes out; see wasm/README.md):
//   client  OtReceiver.start()            → ot_base_a  → provider OtSender.respond()
//   provider                               ← ot_base_b  ← (returned by respond)
//   client  OtReceiver.finish(ot_base_b), then OtReceiver.extend(n) → ot_extend
//   provider OtSender.acceptExtension(ot_extend)   (repeat extend/accept to top up)
//
// Base OTs are in ot-base.ts; batch sizes, the KOS transcript and the row
// pool in ot-pool.ts.
import type { WasmCore } from './core.js';
import { BASE_OTS, KEY, POINT, baseKey, checkPoint, mulPoint, receiveBaseOts } from './ot-base.js';
import {
  KOS_EXTRA,
  MAX_BATCH,
  MAX_EXTEND,
  MAX_POOL,
  RowPool,
  batchLength,
  kosSeed,
  sessionContext,
  transcriptDigest,
} from './ot-pool.js';
import { ProtocolError, Reader, Tag, Writer, randomBytes } from './ot-wire.js';
import { mul, mulBase, randomScalar, sub } from './ristretto.js';
import { check, Status } from './status.js';

export { BASE_OTS, receiveBaseHere, useNativeBaseOt, type BaseOtReceive } from './ot-base.js';
export { KOS_EXTRA, MAX_BATCH, MAX_EXTEND, MAX_POOL, extensionSize, maxExtendWithin } from './ot-pool.js';

/** What both ends of a session's OTs keep: the KOS transcript, batch and PRG counters, the row pool. */
abstract class OtParty {
  protected transcript: Uint8Array | undefined;
  protected batch = 0;
  protected block = 0; // ChaCha20 block counter of the column PRGs
  protected readonly pool = new RowPool();
  protected readonly context: Uint8Array;

  /** `context` binds the session's KOS challenges (both ends must pass the same: the session id). */
  constructor(
    readonly core: WasmCore,
    context: Uint8Array,
  ) {
    this.context = sessionContext(context);
  }
}

/** Client side: base-OT sender, OT-extension receiver, evaluator's label source. */
export class OtReceiver extends OtParty {
  private a: Uint8Array | undefined;
  private A: Uint8Array | undefined;
  private k0: Uint8Array | undefined;
  private k1: Uint8Array | undefined;
  private baseA: Uint8Array | undefined;

  /** First setup message (ot_base_a): the base-OT sender's point A = aG. */
  start(): Uint8Array {
    if (this.a !== undefined) throw new Error('OtReceiver.start called twice');
    this.a = randomScalar();
    this.A = mulBase(this.a);
    this.baseA = new Writer(2 + POINT, Tag.OtBaseA).bytes(this.A).done();
    return this.baseA.slice();
  }

  /** Processes ot_base_b: derives the 128 seed pairs. */
  finish(msg: Uint8Array): void {
    if (this.a === undefined || this.A === undefined || !this.baseA) throw new Error('OtReceiver.finish before start');
    if (this.k0) throw new Error('OtReceiver.finish called twice');
    const r = new Reader(msg, 'ot_base_b').header(Tag.OtBaseB);
    r.expectRemaining(KEY + BASE_OTS * POINT);
    r.bytes(KEY); // the provider's check seed: enters the KOS challenge through the transcript
    const k0 = new Uint8Array(BASE_OTS * KEY);
    const k1 = new Uint8Array(BASE_OTS * KEY);
    const aA = mul(this.a, this.A);
    for (let i = 0; i < BASE_OTS; i++) {
      const Bbytes = r.bytes(POINT);
      const aB = mulPoint(this.a, Bbytes, `ot_base_b point ${i}`);
      k0.set(baseKey(i, this.A, Bbytes, aB), i * KEY);
      k1.set(baseKey(i, this.A, Bbytes, sub(aB, aA)), i * KEY);
      aB.fill(0);
    }
    r.end();
    aA.fill(0);
    this.a.fill(0); // the scalar is no longer needed
    [this.k0, this.k1, this.transcript] = [k0, k1, transcriptDigest(this.context, this.baseA, msg)];
  }

  /** Random OTs ready for derandomization. */
  get available(): number {
    return this.pool.available;
  }

  /**
   * Extends the pool by at least n random correlated OTs (rounded so the
   * batch fills 512-bit PRG blocks) and returns the ot_extend message.
   */
  extend(n: number): Uint8Array {
    if (!this.k0 || !this.k1 || !this.transcript) throw new Error('OtReceiver.extend before base OTs finished');
    if (!Number.isInteger(n) || n < 1 || n > MAX_EXTEND) {
      throw new RangeError(`extension size must be 1..${MAX_EXTEND}, got ${n}`);
    }
    if (this.pool.available + batchLength(n) - KOS_EXTRA > MAX_POOL) {
      throw new RangeError(`${this.pool.available} OTs are still unused; use them before extending`);
    }
    const L = batchLength(n);
    const stride = L / 8;
    const choices = randomBytes(stride);
    const core = this.core;
    const sizes = [BASE_OTS * KEY, BASE_OTS * KEY, stride, BASE_OTS * stride, 16 * L, 32];
    const ptrs = sizes.map((s) => core.alloc(s));
    const [pk0, pk1, pr, pu, pt, pxt] = ptrs;
    try {
      core.heap.set(this.k0, pk0);
      core.heap.set(this.k1, pk1);
      core.heap.set(choices, pr);
      check(core.fn('pmf_ot_recv_extend')(pk0, pk1, this.block, L, pr, pu, pt), 'OT extension batch');
      const u = core.copyOut(pu, BASE_OTS * stride);
      this.deviate(u, stride);
      const seed = kosSeed(this.transcript, this.batch, L, u);
      check(
        core.withBuffers([seed], (ps) => core.fn('pmf_ot_kos_respond')(ps, L, pr, pt, pxt)),
        'KOS response',
      );
      const usable = L - KOS_EXTRA;
      const bits = new Uint8Array(usable);
      for (let j = 0; j < usable; j++) bits[j] = (choices[j >> 3] >> (j & 7)) & 1;
      this.pool.append(core.heap.subarray(pt, pt + 16 * usable), bits);
      bits.fill(0);
      const msg = new Writer(2 + 8 + u.length + 32, Tag.OtExtend)
        .u32(this.batch)
        .u32(L)
        .bytes(u)
        .bytes(core.heap.subarray(pxt, pxt + 32))
        .done();
      this.batch += 1;
      this.block += L / 512;
      return msg;
    } finally {
      choices.fill(0);
      ptrs.forEach((p, i) => core.wipeAndFree(p, sizes[i]));
    }
  }

  /**
   * Hook for tests that model a deviating receiver (e.g. other choice bits in
   * one column of u); the honest receiver sends u unchanged.
   */
  protected deviate(_u: Uint8Array, _stride: number): void {}

  /** Takes the next n OTs: their global offset, choice bits c_j and labels t_j. @internal */
  take(n: number): { offset: number; rows: Uint8Array; bits: Uint8Array } {
    return this.pool.take(n);
  }

  /** Wipes keys and the pool; the object is unusable afterwards. */
  close(): void {
    this.k0?.fill(0);
    this.k1?.fill(0);
    this.k0 = this.k1 = undefined;
    this.a?.fill(0);
    this.a = undefined;
    this.pool.clear();
  }
}

/** Provider side: base-OT receiver, OT-extension sender, holder of Δ. */
export class OtSender extends OtParty {
  private ks: Uint8Array | undefined;
  private s: Uint8Array | undefined;
  private failed = false;
  private tweak = 0;

  /** Answers ot_base_a with ot_base_b; chooses Δ = s (lsb forced to 1). */
  respond(msg: Uint8Array): Uint8Array {
    this.usable();
    if (this.s) throw new ProtocolError('ot_base_a: base OTs already done for this session');
    const r = new Reader(msg, 'ot_base_a').header(Tag.OtBaseA);
    const Abytes = r.bytes(POINT).slice();
    r.end();
    const A = checkPoint(Abytes, 'ot_base_a');
    const s = randomBytes(16);
    s[0] |= 1; // point-and-permute needs lsb(Δ) = 1
    const checkSeed = randomBytes(KEY);
    const wide = randomBytes(64 * BASE_OTS);
    let both: Uint8Array;
    try {
      both = receiveBaseOts(A, s, wide);
    } finally {
      wide.fill(0); // the scalars' randomness, also when the loop refuses
    }
    const ks = both.slice(BASE_OTS * POINT);
    const w = new Writer(2 + KEY + BASE_OTS * POINT, Tag.OtBaseB)
      .bytes(checkSeed)
      .bytes(both.subarray(0, BASE_OTS * POINT));
    both.fill(0);
    const reply = w.done();
    [this.ks, this.s, this.transcript] = [ks, s, transcriptDigest(this.context, msg, reply)];
    return reply;
  }

  /**
   * Verifies and absorbs an ot_extend message; returns the number of OTs added.
   * A failed consistency check aborts the session for good: retrying with the
   * same Δ would let a cheating receiver learn it bit by bit.
   */
  acceptExtension(msg: Uint8Array): number {
    this.usable();
    if (!this.ks || !this.s || !this.transcript) throw new ProtocolError('ot_extend before base OTs');
    const r = new Reader(msg, 'ot_extend').header(Tag.OtExtend);
    const batch = r.u32();
    const L = r.u32();
    if (batch !== this.batch)
      throw new ProtocolError(`ot_extend: batch ${batch} out of order (expected ${this.batch})`);
    if (L % 512 !== 0 || L <= KOS_EXTRA || L > MAX_BATCH) throw new ProtocolError(`ot_extend: bad batch length ${L}`);
    if (this.pool.available + L - KOS_EXTRA > MAX_POOL) {
      throw new ProtocolError(`ot_extend: ${this.pool.available} OTs are still unused; use them before extending`);
    }
    const stride = L / 8;
    r.expectRemaining(BASE_OTS * stride + 32);
    const u = r.bytes(BASE_OTS * stride);
    const xt = r.bytes(32);
    const seed = kosSeed(this.transcript, batch, L, u);
    const core = this.core;
    const ok = core.withBuffers([this.ks, this.s, u, seed, xt], (pk, ps, pu, pseed, pxt) => {
      const pq = core.alloc(16 * L);
      try {
        if (core.fn('pmf_ot_send_extend')(pk, ps, this.block, L, pu, pq) !== Status.Ok) {
          throw new ProtocolError('ot_extend: batch rejected (size or counter)');
        }
        if (core.fn('pmf_ot_kos_check')(pseed, L, pq, ps, pxt) !== 1) return false;
        const usable = L - KOS_EXTRA;
        this.pool.append(core.heap.subarray(pq, pq + 16 * usable));
        return true;
      } finally {
        core.wipeAndFree(pq, 16 * L);
      }
    });
    if (!ok) {
      this.close();
      throw new ProtocolError(
        'ot_extend: KOS consistency check failed; the receiver deviated, session aborted',
        'rejected',
      );
    }
    this.batch += 1;
    this.block += L / 512;
    return L - KOS_EXTRA;
  }

  /** Random OTs ready for derandomization. */
  get available(): number {
    return this.pool.available;
  }

  /** Offset of the next unused OT (the client's choice message must name it). */
  get nextOffset(): number {
    return this.pool.offset;
  }

  /** Takes n OT rows q_j starting at `offset` (never below the next unused one). @internal */
  take(offset: number, n: number): Uint8Array {
    this.usable();
    const skip = offset - this.pool.offset;
    // Reuse would hand out a second label for a wire the client already
    // holds; skipping ahead only wastes OTs, and resynchronizes the pools
    // after a request the provider rejected after the client had taken them.
    if (skip < 0)
      throw new ProtocolError(`OT offset ${offset} was already used (next unused OT is ${this.pool.offset})`);
    if (skip + n > this.pool.available) {
      throw new ProtocolError(
        `client asked for OTs up to ${offset + n}, pool ends at ${this.pool.offset + this.pool.available}`,
      );
    }
    if (skip > 0) this.pool.take(skip).rows.fill(0);
    return this.pool.take(n).rows;
  }

  /** Δ for garbling (16 bytes, lsb 1). @internal */
  delta(): Uint8Array {
    this.usable();
    if (!this.s) throw new Error('OtSender used before base OTs');
    return this.s;
  }

  /** Reserves n fresh hash tweaks (unique per session since Δ is per session). @internal */
  reserveTweaks(n: number): number {
    const t = this.tweak;
    this.tweak += n;
    return t;
  }

  /** Wipes Δ, keys and the pool; the object is unusable afterwards. */
  close(): void {
    this.ks?.fill(0);
    this.s?.fill(0);
    this.ks = this.s = undefined;
    this.pool.clear();
    this.failed = true;
  }

  private usable(): void {
    if (this.failed) throw new ProtocolError('OT session is closed or aborted', 'rejected');
  }
}
