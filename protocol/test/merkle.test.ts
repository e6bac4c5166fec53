// RFC 6962 hashing and proofs against known answers: the RFC's reference test
// tree (the eight leaves of certificate-transparency's merkle_tree_test, whose
// roots RFC 9162 implementations publish) and, for every inclusion and
// consistency proof of a 33-leaf tree, Go's golang.org/x/mod/sumdb/tlog.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { bytesToHex, hexToBytes } from '@noble/hashes/utils.js';
import { EMPTY_ROOT, hashLeaf, MerkleTree, verifyConsistency, verifyInclusion } from '../merkle.js';
import { goReference } from './tlog-vectors.js';

const RFC_LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'];
const RFC_ROOTS = [
  '6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d',
  'fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125',
  'aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77',
  'd37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7',
  '4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4',
  '76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef',
  'ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c',
  '5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328',
];

const hex = (hs: Uint8Array[]): string[] => hs.map(bytesToHex);
const tree = (leaves: string[]): MerkleTree => new MerkleTree(leaves.map((l) => hashLeaf(hexToBytes(l))));

test('the RFC 6962 test tree: the empty root and the root of every prefix', () => {
  assert.equal(bytesToHex(EMPTY_ROOT), 'e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855');
  const t = tree(RFC_LEAVES);
  assert.deepEqual(
    RFC_ROOTS.map((_, i) => bytesToHex(t.root(i + 1))),
    RFC_ROOTS,
  );
});

interface GoTree {
  leafHashes: string[];
  roots: string[];
  inclusion: Record<string, string[]>;
  consistency: Record<string, string[]>;
}

test('every inclusion and consistency proof of a 33-leaf tree equals Go x/mod/sumdb/tlog’s and verifies', () => {
  // Leaves of varied lengths, including the RFC's, so no two are alike.
  const leaves = Array.from({ length: 33 }, (_, i) => RFC_LEAVES[i % 8] + i.toString(16).padStart(4, '0'));
  const go = goReference<GoTree>('tree', { leaves });
  const t = tree(leaves);
  assert.deepEqual(
    leaves.map((l) => bytesToHex(hashLeaf(hexToBytes(l)))),
    go.leafHashes,
  );
  let checked = 0;
  for (let n = 1; n <= leaves.length; n++) {
    const root = t.root(n);
    assert.equal(bytesToHex(root), go.roots[n - 1], `root of ${n}`);
    for (let i = 0; i < n; i++) {
      const proof = t.inclusionProof(i, n);
      assert.deepEqual(hex(proof), go.inclusion[`${i}:${n}`], `inclusion ${i} in ${n}`);
      assert.ok(verifyInclusion(hashLeaf(hexToBytes(leaves[i])), i, n, proof, root));
      checked++;
    }
    for (let m = 1; m < n; m++) {
      const proof = t.consistencyProof(m, n);
      assert.deepEqual(hex(proof), go.consistency[`${m}:${n}`], `consistency ${m} → ${n}`);
      assert.ok(verifyConsistency(m, n, t.root(m), root, proof), `consistency ${m} → ${n} verifies`);
      checked++;
    }
  }
  assert.equal(checked, (33 * 34) / 2 + (32 * 33) / 2);
});

test('a proof that is altered in any way, or checked for another leaf, position or root, fails', () => {
  const t = tree(RFC_LEAVES.concat(RFC_LEAVES, ['ff', 'fe', 'fd']));
  const n = t.size;
  const flip = (h: Uint8Array): Uint8Array => Uint8Array.from(h, (b, j) => (j === 7 ? b ^ 1 : b));
  const flipped = (p: Uint8Array[], k: number): Uint8Array[] => p.map((h, j) => (j === k ? flip(h) : h));
  for (let i = 0; i < n; i++) {
    const leaf = hashLeaf(hexToBytes(i < 16 ? RFC_LEAVES[i % 8] : ['ff', 'fe', 'fd'][i - 16]));
    const proof = t.inclusionProof(i, n);
    const root = t.root();
    assert.ok(verifyInclusion(leaf, i, n, proof, root));
    for (let k = 0; k < proof.length; k++) {
      assert.ok(!verifyInclusion(leaf, i, n, flipped(proof, k), root), `hash ${k} of ${i} flipped`);
    }
    assert.ok(!verifyInclusion(leaf, i, n, proof.slice(1), root), 'a hash dropped');
    assert.ok(!verifyInclusion(leaf, i, n, [...proof, root], root), 'a hash added');
    assert.ok(!verifyInclusion(leaf, (i + 1) % n, n, proof, root), 'another index');
    assert.ok(!verifyInclusion(flip(leaf), i, n, proof, root), 'another leaf');
    assert.ok(!verifyInclusion(leaf, i, n, proof, flip(root)), 'another root');
  }
  for (let m = 1; m < n; m++) {
    const proof = t.consistencyProof(m, n);
    const [a, b] = [t.root(m), t.root()];
    for (let k = 0; k < proof.length; k++)
      assert.ok(!verifyConsistency(m, n, a, b, flipped(proof, k)), `hash ${k} of ${m} flipped`);
    assert.ok(!verifyConsistency(m, n, a, b, proof.slice(0, -1)), 'a hash dropped');
    assert.ok(!verifyConsistency(m, n, a, b, [...proof, a]), 'a hash added');
    assert.ok(!verifyConsistency(m, n, flip(a), b, proof), 'another old root');
    assert.ok(!verifyConsistency(m, n, a, flip(b), proof), 'another new root');
  }
});

test('edge cases: equal sizes, the empty tree, a shrinking tree, out-of-range indexes', () => {
  const t = tree(RFC_LEAVES);
  const r = t.root();
  assert.ok(verifyConsistency(8, 8, r, r, []));
  assert.ok(!verifyConsistency(8, 8, r, t.root(7), []), 'same size, other root: a fork');
  assert.ok(verifyConsistency(0, 8, EMPTY_ROOT, r, []));
  assert.ok(!verifyConsistency(8, 7, r, t.root(7), []), 'a tree never shrinks');
  assert.ok(!verifyConsistency(4, 8, t.root(4), r, []), 'a proof is needed between different sizes');
  assert.ok(!verifyInclusion(hashLeaf(new Uint8Array()), 8, 8, t.inclusionProof(7), r));
  assert.ok(!verifyInclusion(hashLeaf(new Uint8Array()), -1, 8, t.inclusionProof(0), r));
  assert.ok(!verifyInclusion(hashLeaf(new Uint8Array()), 0, 2 ** 60, t.inclusionProof(0), r), 'sizes past 2^53');
  assert.deepEqual(t.consistencyProof(0), []);
  assert.deepEqual(t.consistencyProof(8), []);
  assert.throws(() => t.inclusionProof(8), /leaf 8 is not in a tree of 8/);
  assert.throws(() => t.root(9), /tree size 9 is not in 0..8/);
});
