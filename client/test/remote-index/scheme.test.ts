// The remote index's scheme (docs/remote-search.md#scheme) against its
// description and independent references: every derivation recomputed with a
// BLAKE3 written from its specification (blake3-reference.ts), frozen
// known answers, Mitra's Update and Search recomputed by a naive
// implementation of the paper's algorithm, and search results against a
// plaintext scan of the same mail, through provider-server's real handler
// and store.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import {
  ADDR_BYTES,
  CHECK_BYTES,
  decodeUpdate,
  DELTA_SLOT_BYTES,
  PAD_SLOT,
  RECORD_BYTES,
  SIZE_CLASSES,
  SLOTS,
  sizeClass,
} from '../../../protocol/remote-search.js';
import { blake3 } from '@noble/hashes/blake3.js';
import { RemoteIndexApi } from '../../core/remote-index/api.js';
import { keyedBlock, keyWords } from '../../core/remote-index/blake3-block.js';
import { address, deriveKeys, keywordKey, open, sealedAs, sealSort, tagOf } from '../../core/remote-index/keys.js';
import { documentKeywords } from '../../core/remote-index/keywords.js';
import { RemoteIndex } from '../../core/remote-index/remote-index.js';
import { Counters } from '../../core/remote-index/state.js';
import { buildUpdate, KeywordKeys, type IndexDoc } from '../../core/remote-index/update.js';
import { paddedRequest, planSearch } from '../../core/remote-index/search.js';
import { referenceDeriveKey, referenceKeyed } from './blake3-reference.js';
import { startIndexServer, type IndexServer } from './fixture.js';

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const utf8 = new TextEncoder();
const SEARCH_KEY = Uint8Array.from({ length: 32 }, (_, i) => i);

/** The reference's G(K, w‖c): the keyword's key, its slot, and the address of counter c. */
function refKeyword(w: string): { key: Uint8Array; slot: number } {
  const kw = referenceDeriveKey('pmf remote-index v1 keyword', SEARCH_KEY, 32);
  const out = referenceKeyed(kw, utf8.encode(w), 36);
  return {
    key: out.subarray(0, 32),
    slot: (((out[32] << 24) | (out[33] << 16) | (out[34] << 8) | out[35]) >>> 0) % SLOTS,
  };
}
const u32be = (c: number): Uint8Array => Uint8Array.of(c >>> 24, (c >>> 16) & 255, (c >>> 8) & 255, c & 255);
const refAddress = (w: string, c: number): string => hex(referenceKeyed(refKeyword(w).key, u32be(c), 16));
/** The entry's check: bytes 16..20 of the address's PRF output XOR the message's pad, BLAKE3-keyed(K_check, tag)[0..4). */
const refCheck = (w: string, c: number, id: string): string => {
  const tag = referenceKeyed(referenceDeriveKey('pmf remote-index v1 tag', SEARCH_KEY, 32), utf8.encode(id), 16);
  const pad = referenceKeyed(referenceDeriveKey('pmf remote-index v1 check', SEARCH_KEY, 32), tag, 4);
  const mask = referenceKeyed(refKeyword(w).key, u32be(c), 20).subarray(16);
  return hex(mask.map((b, i) => b ^ pad[i]));
};

test('derivations are the specified BLAKE3 modes (independent reference, frozen answers)', async () => {
  const keys = await deriveKeys(SEARCH_KEY);
  assert.equal(hex(keys.keyword.bytes), '1cceca8d73ea76f68f3362ab201c8faa3cf261360cde9de003a9991c734b0160');
  assert.equal(hex(keys.keyword.bytes), hex(referenceDeriveKey('pmf remote-index v1 keyword', SEARCH_KEY, 32)));
  const k = keywordKey(keys, 'pangolin');
  assert.equal(k.slot, 46286);
  assert.equal(hex(address(k, 1)), 'd1f5684ed9e41801e58c5dbb703436dd');
  assert.equal(hex(address(k, 2)), 'a8a4cb50d866f95750ec295cd8228414');
  assert.equal(hex(tagOf(keys, 'pmf-0123456789abcdef0123456789abcdef')), '663686096d7cea571ac5c61993fb7db7');
  for (const w of ['a', 'ünïcødé', 'x'.repeat(120), 'mail'])
    for (const c of [1, 2, 255, 256, 70_000, 2 ** 31])
      assert.equal(hex(address(keywordKey(keys, w), c)), refAddress(w, c), `${w} ${c}`);
  // The sort pad: BLAKE3-keyed(K_sort, tag) XOR the date, big-endian.
  const tag = tagOf(keys, 'id-1');
  const date = Date.UTC(2026, 10, 21, 10, 0, 0);
  const pad = referenceKeyed(referenceDeriveKey('pmf remote-index v1 sort', SEARCH_KEY, 32), tag, 8);
  const plain = Buffer.alloc(8);
  plain.writeBigUInt64BE(BigInt(date));
  assert.equal(hex(sealSort(keys, tag, date)), hex(plain.map((b, i) => b ^ pad[i])));
});

test('the one-block BLAKE3 is noble’s blake3() and the specification’s, for every input and output length', () => {
  for (let len = 0; len <= 64; len++)
    for (const dkLen of [1, 4, 8, 16, 31, 32, 33, 36, 63, 64]) {
      const key = crypto.getRandomValues(new Uint8Array(32));
      const input = crypto.getRandomValues(new Uint8Array(len));
      const fast = hex(keyedBlock(keyWords(key), input, new Uint8Array(dkLen)));
      assert.equal(fast, hex(blake3(input, { key, dkLen })), `${len} → ${dkLen}`);
      assert.equal(fast, hex(referenceKeyed(key, input, dkLen)), `${len} → ${dkLen}`);
    }
  assert.throws(() => keyedBlock(keyWords(new Uint8Array(32)), new Uint8Array(65), new Uint8Array(16)), RangeError);
});

/**
 * Mitra as Chamani et al. (CCS 2018, Fig. 2) describe Update, with a
 * counter per slot: for each keyword of each message in order,
 * FileCnt[slot(w)]++, entry address G(K, w‖FileCnt); as value, instead of
 * (id‖op) ⊕ G(K, w‖FileCnt‖1), a check: more of G's output XOR a pad of the
 * message's tag (the provider stores the document beside the address). Returns each
 * message's addresses with their checks, and the slots the delta must list.
 */
function naiveMitraUpdate(
  docs: { deliveryId: string; keywords: string[] }[],
  fileCnt: Map<number, number>,
): { addrs: Map<string, string>[]; slots: number[] } {
  const slots: number[] = [];
  const addrs = docs.map((d) => {
    const out = new Map<string, string>();
    for (const w of d.keywords) {
      const slot = refKeyword(w).slot;
      const c = (fileCnt.get(slot) ?? 0) + 1;
      fileCnt.set(slot, c);
      slots.push(slot);
      out.set(refAddress(w, c), refCheck(w, c, d.deliveryId));
    }
    return out;
  });
  return { addrs, slots };
}

const doc = (id: string, keywords: string[], date = 1_700_000_000_000): IndexDoc => ({
  deliveryId: id,
  date,
  url: `https://mail.example/m/${id}`,
  subject: `subject ${id}`,
  from: 'Bob <bob@example.org>',
  keywords,
});

test('an update is Mitra’s Update per keyword, padded per message to its size class', async () => {
  const keys = await deriveKeys(SEARCH_KEY);
  const counters = new Counters();
  await counters.apply(keys, { version: 0, snapshotVersion: 0, buckets: [], deltas: [] });
  const fileCnt = new Map<number, number>();
  const batches = [
    [doc('m1', ['pangolin', 'budget', 'approv']), doc('m2', ['pangolin', 'walrus'])],
    [doc('m3', Array.from({ length: 17 }, (_, i) => `word${i}`).concat('pangolin'))],
  ];
  for (const docs of batches) {
    const built = await buildUpdate(keys, new KeywordKeys(keys), counters, docs);
    const expected = naiveMitraUpdate(docs, fileCnt);
    built.body.docs.forEach((d, i) => {
      const n = docs[i].keywords.length;
      assert.equal(d.sizeClass, sizeClass(n));
      assert.equal(d.addrs.length, SIZE_CLASSES[d.sizeClass] * ADDR_BYTES);
      const all = Array.from({ length: d.addrs.length / 16 }, (_, j) => hex(d.addrs.subarray(16 * j, 16 * j + 16)));
      assert.deepEqual([...all].sort(), all, 'a message’s addresses are sorted: padding sits anywhere');
      assert.equal(new Set(all).size, all.length);
      assert.equal(d.checks.length, SIZE_CLASSES[d.sizeClass] * CHECK_BYTES);
      for (const [a, check] of expected.addrs[i]) {
        const j = all.indexOf(a);
        assert.ok(j >= 0, `Mitra's address ${a} of ${docs[i].deliveryId}`);
        assert.equal(hex(d.checks.subarray(4 * j, 4 * j + 4)), check, `the check of ${a}`);
      }
      assert.equal(hex(d.tag), hex(tagOf(keys, docs[i].deliveryId)));
      assert.equal(d.record.length, RECORD_BYTES);
    });
    // The delta lists exactly the slots advanced, then padding, at the padded size.
    const delta = await open(keys, built.body.delta, sealedAs('delta', counters.version + 1));
    const padded = built.body.docs.reduce((s, d) => s + SIZE_CLASSES[d.sizeClass], 0);
    assert.equal(delta.length, padded * DELTA_SLOT_BYTES);
    const listed = Array.from(
      { length: padded },
      (_, j) => (delta[3 * j] << 16) | (delta[3 * j + 1] << 8) | delta[3 * j + 2],
    );
    assert.deepEqual(listed.slice(0, expected.slots.length), expected.slots);
    assert.ok(listed.slice(expected.slots.length).every((s) => s === PAD_SLOT));
    counters.version++;
  }
});

test('a search plan for a keyword in 100,000 messages: every address once, padded, shuffled', async () => {
  const keys = await deriveKeys(SEARCH_KEY);
  const counters = new Counters();
  await counters.apply(keys, { version: 0, snapshotVersion: 0, buckets: [], deltas: [] });
  const kw = new KeywordKeys(keys);
  counters.slots[kw.get('common').slot] = 100_000;
  counters.slots[kw.get('rare').slot] = 3;
  const plan = planSearch(kw, counters, { required: ['common', 'rare'], excluded: [] });
  assert.equal(plan.addrs.length / 16, paddedRequest(100_003));
  assert.deepEqual(
    plan.positions.map((p) => p.length),
    [100_000, 3],
  );
  const at = (p: number) => hex(plan.addrs.subarray(16 * p, 16 * p + 16));
  assert.equal(at(plan.positions[0][99_999]), refAddress('common', 100_000));
  assert.equal(at(plan.positions[1][0]), refAddress('rare', 1));
  const used = new Set([...plan.positions[0], ...plan.positions[1]]);
  assert.equal(used.size, 100_003, 'no position twice');
  assert.ok(plan.positions[0][0] !== 0 || plan.positions[0][1] !== 1, 'shuffled');
});

describe('through provider-server’s handler and store', () => {
  let server: IndexServer;
  let index: RemoteIndex;
  let alice: { userId: number; token: string };
  let keys: Awaited<ReturnType<typeof deriveKeys>>;
  const vocabulary = Array.from({ length: 120 }, (_, i) => `term${i.toString(36)}x`);
  const corpus: { doc: IndexDoc; words: Set<string> }[] = [];
  let seed = 42;
  const rnd = (n: number): number => {
    seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
    return seed % n;
  };

  before(async () => {
    server = await startIndexServer({ limits: { compactAfterBytes: 2048 } });
    alice = await server.user('alice');
    keys = await deriveKeys(SEARCH_KEY);
    index = new RemoteIndex(new RemoteIndexApi({ baseUrl: server.url, token: alice.token, fetch: server.fetch }), keys);
    for (let i = 0; i < 300; i++) {
      // Zipf-like: low terms are frequent.
      const n = 3 + rnd(40);
      const words = new Set(
        Array.from({ length: n }, () => vocabulary[Math.floor(vocabulary.length * (rnd(1000) / 1000) ** 3)]),
      );
      const body = [...words].join(' ');
      const d = doc(`id-${i}`, documentKeywords({ subject: '', from: '', body }), 1_700_000_000_000 + rnd(10 ** 9));
      corpus.push({ doc: d, words: new Set(d.keywords) });
    }
    for (let i = 0; i < corpus.length; i += 40) await index.add(corpus.slice(i, i + 40).map((c) => c.doc));
  });
  after(() => server.close());

  test('every query finds what a plaintext scan finds, newest first', async () => {
    for (let q = 0; q < 60; q++) {
      const required = Array.from({ length: 1 + rnd(3) }, () => vocabulary[rnd(30)]);
      const excluded = q % 4 === 0 ? [vocabulary[rnd(60)]] : [];
      const want = corpus
        .filter((c) => required.every((w) => c.words.has(w)) && !excluded.some((w) => c.words.has(w)))
        .sort(
          (a, b) =>
            b.doc.date - a.doc.date || Buffer.compare(tagOf(keys, a.doc.deliveryId), tagOf(keys, b.doc.deliveryId)),
        );
      const got = await index.search(
        { required: [...new Set(required)], excluded: excluded.filter((w) => !required.includes(w)) },
        1000,
      );
      assert.equal(got.total, want.length, `${required} -${excluded}`);
      assert.deepEqual(
        got.hits.map((h) => h.deliveryId),
        want.map((c) => c.doc.deliveryId),
      );
    }
    const [{ tag, ...first }] = (await index.search(corpus[0].doc.keywords[0], 1)).hits;
    const { keywords: _, ...record } = corpus.find((c) => c.doc.deliveryId === first.deliveryId)!.doc;
    assert.deepEqual(first, record, 'the record comes back whole');
    assert.equal(hex(tag), hex(tagOf(keys, first.deliveryId)));
  });

  test('a search sends Mitra’s Search token: G(K, w‖i) for every i up to the slot’s counter, padded', async () => {
    const w = vocabulary[0];
    const before = server.seen.get('/remote-index/search')?.length ?? 0;
    await index.search(w);
    const sent = server.seen.get('/remote-index/search')![before];
    const count = index.counters.slots[refKeyword(w).slot];
    const addrs = new Set(Array.from({ length: sent.length / 16 }, (_, j) => hex(sent.subarray(16 * j, 16 * j + 16))));
    for (let c = 1; c <= count; c++) assert.ok(addrs.has(refAddress(w, c)), `address ${c} of ${count}`);
    assert.ok(addrs.size >= count && addrs.size < 1.5 * Math.max(count, 16) + 1, 'padded to the next √2 step');
  });

  test('the provider compacted the counters on the way, and a new device with only the key finds the same', async () => {
    const stats = await server.store.sql().all<{ kind: number }>('SELECT kind FROM ri_log ORDER BY version', []);
    assert.equal(stats[0].kind, 2, 'the log starts at a snapshot');
    const token = await server.store.issueToken(alice.userId);
    const fresh = new RemoteIndex(new RemoteIndexApi({ baseUrl: server.url, token }), await deriveKeys(SEARCH_KEY));
    for (const w of vocabulary.slice(0, 10)) {
      const a = await fresh.search(w, 1000);
      const b = await index.search(w, 1000);
      assert.deepEqual(
        a.hits.map((h) => h.deliveryId),
        b.hits.map((h) => h.deliveryId),
        w,
      );
    }
    assert.ok(!fresh.counters.complete, 'the searching device fetched only its keywords’ buckets');
  });

  test('what the provider stores is the padded entries: one row per padded entry, none readable', async () => {
    const [{ n }] = await server.store.sql().all<{ n: number }>('SELECT COUNT(*) AS n FROM ri_entries', []);
    const padded = corpus.reduce((s, c) => s + SIZE_CLASSES[sizeClass(c.doc.keywords.length)], 0);
    assert.equal(Number(n), padded);
    const updates = server.seen.get('/remote-index/update')!.map((b) => decodeUpdate(b));
    assert.equal(
      updates.reduce((s, u) => s + u.docs.length, 0),
      corpus.length,
      'each message sent once',
    );
  });
});
