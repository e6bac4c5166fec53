// RFC 6962 Merkle tree hashing with inclusion and consistency proofs (the
// algorithms as RFC 9162 §2.1 restates them), for the package transparency
// log. No npm package provides RFC 6962 consistency proofs, so this is
// written here and checked against the RFC's test tree and against Go's
// golang.org/x/mod/sumdb/tlog (protocol/test/merkle.test.ts).
//   leaf hash  = SHA-256(0x00 ‖ leaf bytes)
//   node hash  = SHA-256(0x01 ‖ left ‖ right)
//   empty tree = SHA-256("")
import { sha256 } from '@noble/hashes/sha2.js';
import { equalBytes } from '@noble/curves/utils.js';
import { concatBytes } from '@noble/hashes/utils.js';

export const HASH_BYTES = 32;
/** A proof of a tree of up to 2^64 leaves has at most 64 hashes; more is malformed. */
export const MAX_PROOF_HASHES = 64;

export const EMPTY_ROOT = sha256(new Uint8Array(0));

export function hashLeaf(data: Uint8Array): Uint8Array {
  return sha256(concatBytes(Uint8Array.of(0), data));
}

export function hashChildren(left: Uint8Array, right: Uint8Array): Uint8Array {
  return sha256(concatBytes(Uint8Array.of(1), left, right));
}

const isPowerOfTwo = (n: number): boolean => n > 0 && (BigInt(n) & (BigInt(n) - 1n)) === 0n;

/** The largest power of two smaller than n (n ≥ 2): where RFC 6962 splits a tree of n leaves. */
function split(n: number): number {
  let k = 1;
  while (k * 2 < n) k *= 2;
  return k;
}

/**
 * An append-only tree over leaf hashes. Complete subtrees never change once
 * full, so their hashes are kept: a root or a proof costs O(log² n) hashes
 * after the first, whatever the request.
 */
export class MerkleTree {
  private readonly leaves: Uint8Array[] = [];
  private readonly full = new Map<string, Uint8Array>();

  constructor(leafHashes: Iterable<Uint8Array> = []) {
    for (const h of leafHashes) this.append(h);
  }

  get size(): number {
    return this.leaves.length;
  }

  append(leafHash: Uint8Array): void {
    this.leaves.push(leafHash);
  }

  /** MTH(D[lo : lo+n]). */
  private hash(lo: number, n: number): Uint8Array {
    if (n === 1) return this.leaves[lo];
    const complete = isPowerOfTwo(n);
    const key = `${lo}:${n}`;
    const kept = complete ? this.full.get(key) : undefined;
    if (kept) return kept;
    const k = split(n);
    const h = hashChildren(this.hash(lo, k), this.hash(lo + k, n - k));
    if (complete) this.full.set(key, h);
    return h;
  }

  private checkSize(n: number): void {
    if (!Number.isSafeInteger(n) || n < 0 || n > this.size) throw new Error(`tree size ${n} is not in 0..${this.size}`);
  }

  /** The root of the first n leaves. */
  root(n = this.size): Uint8Array {
    this.checkSize(n);
    return n === 0 ? EMPTY_ROOT : this.hash(0, n);
  }

  /** RFC 6962 PATH(m, D[n]): the audit path of leaf `index` in the tree of the first n leaves. */
  inclusionProof(index: number, n = this.size): Uint8Array[] {
    this.checkSize(n);
    if (!Number.isSafeInteger(index) || index < 0 || index >= n)
      throw new Error(`leaf ${index} is not in a tree of ${n}`);
    const path = (m: number, lo: number, size: number): Uint8Array[] => {
      if (size === 1) return [];
      const k = split(size);
      return m < k
        ? [...path(m, lo, k), this.hash(lo + k, size - k)]
        : [...path(m - k, lo + k, size - k), this.hash(lo, k)];
    };
    return path(index, 0, n);
  }

  /** RFC 6962 PROOF(m, D[n]): that the tree of the first m leaves is a prefix of the tree of the first n. */
  consistencyProof(m: number, n = this.size): Uint8Array[] {
    this.checkSize(n);
    if (!Number.isSafeInteger(m) || m < 0 || m > n) throw new Error(`tree size ${m} is not in 0..${n}`);
    if (m === 0 || m === n) return [];
    const sub = (m: number, lo: number, size: number, whole: boolean): Uint8Array[] => {
      if (m === size) return whole ? [] : [this.hash(lo, size)];
      const k = split(size);
      return m <= k
        ? [...sub(m, lo, k, whole), this.hash(lo + k, size - k)]
        : [...sub(m - k, lo + k, size - k, false), this.hash(lo, k)];
    };
    return sub(m, 0, n, true);
  }
}

const lsb = (x: bigint): boolean => (x & 1n) === 1n;

/**
 * RFC 9162's walk up a proof path from node fn of a tree whose last node is
 * sn: for each of `count` hashes, whether it is a left sibling. Undefined when
 * the path does not end at the root (too long or too short).
 */
function leftSiblings(fn: bigint, sn: bigint, count: number): boolean[] | undefined {
  const left: boolean[] = [];
  for (let i = 0; i < count; i++) {
    if (sn === 0n) return undefined;
    const isLeft = lsb(fn) || fn === sn;
    left.push(isLeft);
    if (isLeft && !lsb(fn)) {
      while (!lsb(fn) && fn !== 0n) {
        fn >>= 1n;
        sn >>= 1n;
      }
    }
    fn >>= 1n;
    sn >>= 1n;
  }
  return sn === 0n ? left : undefined;
}

/** RFC 9162 §2.1.3.2: whether `proof` shows `leafHash` at `index` in the tree of `size` leaves with `root`. */
export function verifyInclusion(
  leafHash: Uint8Array,
  index: number,
  size: number,
  proof: readonly Uint8Array[],
  root: Uint8Array,
): boolean {
  if (!Number.isSafeInteger(index) || !Number.isSafeInteger(size) || index < 0 || index >= size) return false;
  if (proof.length > MAX_PROOF_HASHES) return false;
  const left = leftSiblings(BigInt(index), BigInt(size - 1), proof.length);
  if (!left) return false;
  const r = proof.reduce((r, p, i) => (left[i] ? hashChildren(p, r) : hashChildren(r, p)), leafHash);
  return equalBytes(r, root);
}

/**
 * RFC 9162 §2.1.4.2: whether `proof` shows the tree of `oldSize` leaves with
 * `oldRoot` to be a prefix of the tree of `newSize` leaves with `newRoot`.
 * Equal sizes need equal roots and an empty proof; any tree extends the empty one.
 */
export function verifyConsistency(
  oldSize: number,
  newSize: number,
  oldRoot: Uint8Array,
  newRoot: Uint8Array,
  proof: readonly Uint8Array[],
): boolean {
  if (!Number.isSafeInteger(oldSize) || !Number.isSafeInteger(newSize) || oldSize < 0 || oldSize > newSize)
    return false;
  if (proof.length > MAX_PROOF_HASHES) return false;
  if (oldSize === newSize) return proof.length === 0 && equalBytes(oldRoot, newRoot);
  if (oldSize === 0) return proof.length === 0;
  if (proof.length === 0) return false;
  const path = isPowerOfTwo(oldSize) ? [oldRoot, ...proof] : [...proof];
  let fn = BigInt(oldSize - 1);
  let sn = BigInt(newSize - 1);
  while (lsb(fn)) {
    fn >>= 1n;
    sn >>= 1n;
  }
  const left = leftSiblings(fn, sn, path.length - 1);
  if (!left) return false;
  let fr = path[0];
  let sr = path[0];
  for (const [i, c] of path.slice(1).entries()) {
    if (left[i]) fr = hashChildren(c, fr);
    sr = left[i] ? hashChildren(c, sr) : hashChildren(sr, c);
  }
  return equalBytes(fr, oldRoot) && equalBytes(sr, newRoot);
}
