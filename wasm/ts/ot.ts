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
import { concatBytes } from '@noble/hashes/utils.js';
import { sha256 } from '@noble/hashes/sha2.js';
import type { WasmCore } from './core.js';
import { ProtocolError, Reader, Tag, Writer, randomBytes } from './ot-wire.js';
import { add, checkElement, mul, mulBase, mulReceived, randomScalar, reduceWide, sub } from './ristretto.js';
import { check, Status } from './status.js';

/** Base OTs per session (= label length in bits). */
export const BASE_OTS = 128;
/** OTs sacrificed per extension batch to mask the KOS response (≥ κ + 40). */
export const KOS_EXTRA = 256;
/** Largest extension batch one message may carry (2 MB of u matrix). */
export const MAX_BATCH = 1 << 17;
/** Most usable OTs one extension batch yields. */
export const MAX_EXTEND = MAX_BATCH - KOS_EXTRA;
/**
 * Unused OTs one side may hold: two full batches. An honest client extends
 * only when it is nearly out; a client that keeps extending without using
 * them would otherwise grow the provider's memory by 2 MiB per batch.
 */
export const MAX_POOL = 2 * MAX_EXTEND;
const KEY = 32;
const POINT = 32;
const ENC = new TextEncoder();

/** Refuses anything but the canonical encoding of a non-identity ristretto255 element. */
function checkPoint(bytes: Uint8Array, what: string): Uint8Array {
  const c = checkElement(bytes);
  if (c === 'invalid') throw new ProtocolError(`${what}: not a valid ristretto255 point`);
  if (c === 'identity') throw new ProtocolError(`${what}: identity point`);
  return bytes;
}

/** s·P for a received P, refused as checkPoint would. */
function mulPoint(scalar: Uint8Array, bytes: Uint8Array, what: string): Uint8Array {
  const product = mulReceived(scalar, bytes);
  if (product === 'identity') throw new ProtocolError(`${what}: identity point`);
  if (product === 'invalid') throw new ProtocolError(`${what}: not a valid ristretto255 point`);
  return product;
}

/** Base-OT key i: H(domain, i, A, B_i, shared point). */
function baseKey(i: number, A: Uint8Array, B: Uint8Array, shared: Uint8Array): Uint8Array {
  const idx = new Uint8Array([i & 0xff, i >> 8]);
  return sha256.create().update(ENC.encode('pmf-ot-base-v1')).update(idx).update(A).update(B).update(shared).digest();
}

interface NodeHash {
  update(data: Uint8Array): NodeHash;
  digest(): Uint8Array;
}
// Node's OpenSSL SHA-256 when running in Node (provider, tests): the KOS
// challenge hashes the whole u matrix (16 bytes per OT), 5-10x faster there
// than in JS. Same function, so both sides agree wherever they run; browsers
// fall back to @noble/hashes. getBuiltinModule is synchronous (Node ≥ 20.16).
const nodeCrypto = (
  globalThis as { process?: { getBuiltinModule?: (id: string) => { createHash(alg: string): NodeHash } } }
).process?.getBuiltinModule?.('node:crypto');

function sha256Of(parts: Uint8Array[]): Uint8Array {
  const h = nodeCrypto ? nodeCrypto.createHash('sha256') : sha256.create();
  for (const p of parts) h.update(p);
  return new Uint8Array(h.digest());
}

function u32s(...v: number[]): Uint8Array {
  const out = new Uint8Array(4 * v.length);
  v.forEach((x, i) => new DataView(out.buffer).setUint32(4 * i, x, true));
  return out;
}

/**
 * What the KOS challenges of a session are bound to: the caller's context (the
 * session id) and both base-OT messages (A, the provider's check seed and
 * B_0..B_127). An extension is then only valid in the session and base-OT
 * run it was computed for, whatever the session layer routes where.
 */
function transcriptDigest(context: Uint8Array, baseA: Uint8Array, baseB: Uint8Array): Uint8Array {
  return sha256Of([ENC.encode('pmf-ot-transcript-v1'), u32s(context.length), context, baseA, baseB]);
}

/** KOS challenge seed by Fiat–Shamir over the session transcript and the whole batch. */
function kosSeed(transcript: Uint8Array, batch: number, L: number, u: Uint8Array): Uint8Array {
  return sha256Of([ENC.encode('pmf-ot-kos-v2'), transcript, u32s(batch, L), u]);
}

function sessionContext(context: Uint8Array): Uint8Array {
  if (!(context instanceof Uint8Array) || context.length === 0) {
    throw new RangeError('OT context must be a non-empty byte string (the session id)');
  }
  return context.slice();
}

/** Columns per batch for n usable OTs: usable + KOS_EXTRA, rounded to 512. */
function batchLength(n: number): number {
  return Math.ceil((n + KOS_EXTRA) / 512) * 512;
}

/**
 * The usable OTs an ot_extend message would add to a pool (0 for anything
 * else): what a sender checks against its memory budget before accepting it.
 */
export function extensionSize(msg: Uint8Array): number {
  try {
    const r = new Reader(msg, 'ot_extend').header(Tag.OtExtend);
    r.u32(); // batch
    return Math.max(0, r.u32() - KOS_EXTRA);
  } catch {
    return 0;
  }
}

/** Room kept in a frame for its header and the ot message around the ot_extend payload. */
const FRAME_ROOM = 1024;

/**
 * The largest extension whose ot_extend (16 bytes per OT of its batch, plus
 * 42) fits a frame of `frameBytes`; 0 when not even the smallest batch does.
 */
export function maxExtendWithin(frameBytes: number): number {
  const batch = Math.floor((frameBytes - FRAME_ROOM) / 16 / 512) * 512;
  return Math.max(0, Math.min(MAX_EXTEND, batch - KOS_EXTRA));
}

/**
 * Pool of correlated OT rows (16 bytes each), consumed strictly in order, with
 * the receiver's choice bits (one byte per row; empty on the sender side).
 * `offset` is the global index of the first unused row. Batches are kept as
 * they arrive (appending copies only the new batch); consumed rows are wiped
 * in place and a batch is dropped once used up.
 */
class RowPool {
  offset = 0;
  private batches: { rows: Uint8Array; bits: Uint8Array; pos: number }[] = [];
  private unused = 0;

  get available(): number {
    return this.unused;
  }

  append(rows: Uint8Array, bits = new Uint8Array(0)): void {
    this.batches.push({ rows: rows.slice(), bits: bits.slice(), pos: 0 });
    this.unused += rows.length / 16;
  }

  take(n: number): { offset: number; rows: Uint8Array; bits: Uint8Array } {
    if (n > this.available) {
      throw new Error(`OT pool exhausted: need ${n} OTs, ${this.available} left; extend the pool first`);
    }
    const rows: Uint8Array[] = [];
    const bits: Uint8Array[] = [];
    for (let left = n; left > 0;) {
      const b = this.batches[0];
      const k = Math.min(left, b.rows.length / 16 - b.pos);
      const [r0, r1] = [16 * b.pos, 16 * (b.pos + k)];
      const [b0, b1] = [Math.min(b.pos, b.bits.length), Math.min(b.pos + k, b.bits.length)];
      rows.push(b.rows.slice(r0, r1));
      bits.push(b.bits.slice(b0, b1));
      b.rows.fill(0, r0, r1);
      b.bits.fill(0, b0, b1);
      b.pos += k;
      left -= k;
      if (b.pos * 16 === b.rows.length) this.batches.shift();
    }
    this.unused -= n;
    const out = { offset: this.offset, rows: concatBytes(...rows), bits: concatBytes(...bits) };
    for (const piece of [...rows, ...bits]) piece.fill(0);
    this.offset += n;
    return out;
  }

  /** Wipes and drops every unused row. */
  clear(): void {
    for (const b of this.batches) {
      b.rows.fill(0);
      b.bits.fill(0);
    }
    this.batches = [];
    this.unused = 0;
  }
}

/**
 * The provider's half of a session's base OTs, given the client's A, the
 * choice bits s and 64 random bytes per OT: for each i, b_i = wide_i mod L,
 * B_i = b_i·G + s_i·A and k_i = H(i, A, B_i, b_i·A). Returns B_0..B_127 ‖
 * k_0..k_127. The provider hands over a native equivalent (useNativeBaseOt).
 */
export type BaseOtReceive = (A: Uint8Array, s: Uint8Array, wide: Uint8Array) => Uint8Array;

/** BaseOtReceive on this realm's ristretto255 backend. @internal (exported for the native binding's test) */
export function receiveBaseHere(A: Uint8Array, s: Uint8Array, wide: Uint8Array): Uint8Array {
  const out = new Uint8Array(BASE_OTS * (POINT + KEY));
  for (let i = 0; i < BASE_OTS; i++) {
    const b = reduceWide(wide.subarray(64 * i, 64 * (i + 1)));
    const B0 = mulBase(b);
    const B1 = add(B0, A);
    // B = s_i ? B1 : B0, selected with a mask rather than a branch.
    const mask = -((s[i >> 3] >> (i & 7)) & 1) & 0xff;
    const B = B0.map((x, k) => x ^ (mask & (x ^ B1[k])));
    const bA = mul(b, A);
    out.set(B, POINT * i);
    out.set(baseKey(i, A, B, bA), POINT * BASE_OTS + KEY * i);
    for (const secret of [b, B0, B1, B, bA]) secret.fill(0);
  }
  return out;
}

let receiveBase: BaseOtReceive = receiveBaseHere;

/**
 * From now on OtSender answers base OTs with `native` (the provider's
 * libsodium binding: one call instead of 640 through JavaScript), or with
 * receiveBaseHere again when given nothing.
 */
export function useNativeBaseOt(native?: BaseOtReceive): void {
  receiveBase = native ?? receiveBaseHere;
}

/** Client side: base-OT sender, OT-extension receiver, evaluator's label source. */
export class OtReceiver {
  private a: Uint8Array | undefined;
  private A: Uint8Array | undefined;
  private k0: Uint8Array | undefined;
  private k1: Uint8Array | undefined;
  private baseA: Uint8Array | undefined;
  private transcript: Uint8Array | undefined;
  private batch = 0;
  private block = 0; // ChaCha20 block counter of the column PRGs
  private readonly pool = new RowPool();
  private readonly context: Uint8Array;

  /** `context` binds the session's KOS challenges (the provider's must be equal: pass the session id). */
  constructor(
    readonly core: WasmCore,
    context: Uint8Array,
  ) {
    this.context = sessionContext(context);
  }

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
export class OtSender {
  private ks: Uint8Array | undefined;
  private s: Uint8Array | undefined;
  private transcript: Uint8Array | undefined;
  private batch = 0;
  private block = 0;
  private failed = false;
  private tweak = 0;
  private readonly pool = new RowPool();
  private readonly context: Uint8Array;

  /** `context` binds the session's KOS challenges (the client's must be equal: pass the session id). */
  constructor(
    readonly core: WasmCore,
    context: Uint8Array,
  ) {
    this.context = sessionContext(context);
  }

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
      both = receiveBase(A, s, wide);
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
