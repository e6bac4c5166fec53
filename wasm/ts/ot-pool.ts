// OT extension batches (IKNP with the KOS check, wasm/ts/ot.ts): their sizes,
// the KOS challenge bound to the session transcript, and the pool of
// correlated rows both sides consume in order.
import { concatBytes } from '@noble/hashes/utils.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { Reader, Tag } from './ot-wire.js';

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
const ENC = new TextEncoder();

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
export function transcriptDigest(context: Uint8Array, baseA: Uint8Array, baseB: Uint8Array): Uint8Array {
  return sha256Of([ENC.encode('pmf-ot-transcript-v1'), u32s(context.length), context, baseA, baseB]);
}

/** KOS challenge seed by Fiat–Shamir over the session transcript and the whole batch. */
export function kosSeed(transcript: Uint8Array, batch: number, L: number, u: Uint8Array): Uint8Array {
  return sha256Of([ENC.encode('pmf-ot-kos-v2'), transcript, u32s(batch, L), u]);
}

export function sessionContext(context: Uint8Array): Uint8Array {
  if (!(context instanceof Uint8Array) || context.length === 0) {
    throw new RangeError('OT context must be a non-empty byte string (the session id)');
  }
  return context.slice();
}

/** Columns per batch for n usable OTs: usable + KOS_EXTRA, rounded to 512. */
export function batchLength(n: number): number {
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
export class RowPool {
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
