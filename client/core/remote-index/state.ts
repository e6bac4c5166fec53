// The per-keyword state Mitra needs (docs/remote-search.md#state): one counter
// per keyword slot. It lives at the provider, sealed, as a snapshot (SLOTS
// counters in BUCKETS sealed buckets of LEB128 varints) and the deltas
// committed since (each the slots its update advanced, 3 bytes a slot,
// PAD_SLOT for a padding entry, sealed at the padded size). A device that
// indexes holds every counter; a device that only searches holds the buckets
// of its keywords, and every delta (a delta never says which slots it holds).
import {
  BUCKETS,
  DELTA_SLOT_BYTES,
  PAD_SLOT,
  SLOTS,
  SLOTS_PER_BUCKET,
  type StateBody,
} from '../../../protocol/remote-search.js';
import { open, RemoteIndexIntegrityError, seal, sealedAs, type RemoteKeys } from './keys.js';

export const bucketOf = (slot: number): number => Math.floor(slot / SLOTS_PER_BUCKET);

/** The provider went back to an older state than this device saw: refused (docs/remote-search.md#malicious-provider). */
export class RemoteIndexRollbackError extends Error {
  override name = 'RemoteIndexRollbackError';
}

export class Counters {
  readonly slots = new Uint32Array(SLOTS);
  /** The latest version applied (0: nothing yet). */
  version = 0;
  /**
   * The highest version this device has seen, also in earlier runs (its
   * caller keeps it): a state older than this is a rollback.
   */
  seen = 0;
  snapshotVersion = 0;
  /** Which buckets' counters are known (a searching device fetches only some). */
  private readonly known = new Uint8Array(BUCKETS);

  /** Whether the counter of `slot` is known here. */
  knows(slot: number): boolean {
    return this.known[bucketOf(slot)] === 1;
  }

  /** The buckets whose counters this device lacks. */
  missing(): number[] {
    return [...this.known.keys()].filter((b) => this.known[b] === 0);
  }

  get complete(): boolean {
    return this.known.every((k) => k === 1);
  }

  /**
   * Applies the provider's answer to a state request made with `since` =
   * this.version: a new snapshot (its buckets replace what was known), then
   * the deltas after it, each opened and counted. Refuses an answer older
   * than what this device has seen, and one that skips or repeats a version.
   */
  async apply(keys: RemoteKeys, s: StateBody): Promise<void> {
    if (s.version < Math.max(this.version, this.seen))
      throw new RemoteIndexRollbackError(
        `the provider's index is at version ${s.version}, older than the ${Math.max(this.version, this.seen)} this device has seen`,
      );
    const fresh = s.snapshotVersion > this.snapshotVersion;
    if (s.snapshotVersion < this.snapshotVersion)
      throw new RemoteIndexRollbackError(
        `the provider's snapshot ${s.snapshotVersion} is older than ${this.snapshotVersion}`,
      );
    let at = this.version;
    if (fresh) {
      this.slots.fill(0);
      this.known.fill(0);
      this.snapshotVersion = s.snapshotVersion;
      at = s.snapshotVersion;
    }
    for (const b of s.buckets) {
      if (this.known[b.index] === 1) throw new RemoteIndexIntegrityError(`the provider sent bucket ${b.index} twice`);
      const plain = await open(keys, b.sealed, sealedAs('bucket', s.snapshotVersion, b.index));
      decodeBucket(plain, this.slots.subarray(b.index * SLOTS_PER_BUCKET, (b.index + 1) * SLOTS_PER_BUCKET));
      this.known[b.index] = 1;
    }
    if (s.snapshotVersion === 0 && this.version === 0) this.known.fill(1); // no snapshot yet: every counter starts at 0
    for (const d of s.deltas) {
      if (d.version !== at + 1)
        throw new RemoteIndexIntegrityError(`the provider skipped from version ${at} to ${d.version}`);
      countDelta(await open(keys, d.sealed, sealedAs('delta', d.version)), this.slots);
      at = d.version;
    }
    if (at !== s.version) throw new RemoteIndexIntegrityError(`the provider's deltas end at ${at}, not ${s.version}`);
    this.version = s.version;
    this.seen = Math.max(this.seen, s.version);
  }

  /** This device committed `version` (a snapshot when `snapshot`): the counters are at it. */
  committed(version: number, snapshot = false): void {
    this.version = version;
    this.seen = Math.max(this.seen, version);
    if (snapshot) this.snapshotVersion = version;
  }

  /** The sealed buckets of a snapshot taken at `version` (the version a compaction commits). */
  async snapshot(keys: RemoteKeys, version: number): Promise<Uint8Array[]> {
    if (!this.complete) throw new Error('only a device holding every counter can take a snapshot');
    const out: Uint8Array[] = [];
    for (let b = 0; b < BUCKETS; b++) {
      const plain = encodeBucket(this.slots.subarray(b * SLOTS_PER_BUCKET, (b + 1) * SLOTS_PER_BUCKET));
      out.push(await seal(keys, plain, sealedAs('bucket', version, b)));
    }
    return out;
  }
}

export function encodeBucket(counters: Uint32Array): Uint8Array {
  const out = new Uint8Array(counters.length * 5);
  let off = 0;
  for (let v of counters) {
    while (v >= 0x80) {
      out[off++] = (v & 0x7f) | 0x80;
      v >>>= 7;
    }
    out[off++] = v;
  }
  return out.slice(0, off);
}

/** Adds a bucket's counters to `into`, which holds what the deltas after the snapshot counted there. */
export function decodeBucket(plain: Uint8Array, into: Uint32Array): void {
  let off = 0;
  for (let i = 0; i < into.length; i++) {
    let v = 0;
    let shift = 0;
    for (;;) {
      if (off >= plain.length || shift > 28) throw new RemoteIndexIntegrityError('a snapshot bucket is malformed');
      const b = plain[off++];
      v += (b & 0x7f) * 2 ** shift;
      shift += 7;
      if (b < 0x80) break;
    }
    if (v + into[i] > 0xffffffff) throw new RemoteIndexIntegrityError('a snapshot counter is out of range');
    into[i] += v;
  }
  if (off !== plain.length) throw new RemoteIndexIntegrityError('a snapshot bucket has trailing bytes');
}

/** A delta's plaintext: the given slots, then PAD_SLOT up to `padded` entries. */
export function encodeDelta(slots: number[], padded: number): Uint8Array {
  const out = new Uint8Array(padded * DELTA_SLOT_BYTES).fill(0xff);
  slots.forEach((s, i) => {
    out[i * 3] = s >>> 16;
    out[i * 3 + 1] = (s >>> 8) & 0xff;
    out[i * 3 + 2] = s & 0xff;
  });
  return out;
}

function countDelta(plain: Uint8Array, slots: Uint32Array): void {
  if (plain.length % DELTA_SLOT_BYTES !== 0) throw new RemoteIndexIntegrityError('a delta is malformed');
  for (let i = 0; i < plain.length; i += DELTA_SLOT_BYTES) {
    const s = (plain[i] << 16) | (plain[i + 1] << 8) | plain[i + 2];
    if (s === PAD_SLOT) continue;
    if (s >= SLOTS) throw new RemoteIndexIntegrityError('a delta names a slot that does not exist');
    slots[s]++;
  }
}
