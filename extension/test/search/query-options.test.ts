// Date filter and date sort against the brute-force reference, resuming
// indexing after a crash mid-way, and rebuilding shards an older version stored.
import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import lunr from 'lunr';
import { openDB } from 'idb';
import { gzip } from '../../search/crypto.js';
import { MailSearch, openMailSearch, SHARD_SIZE } from '../../search/index.js';
import { makeDocs, queries, Reference, rng } from './corpus.js';

const newKey = () => crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
let dbCounter = 0;
const freshName = () => `options-test-${process.pid}-${dbCounter++}`;

describe('date filter and date sort', () => {
  // One sealed shard and a hot one; a message per minute.
  const docs = makeDocs(5, SHARD_SIZE + 300);
  const ref = new Reference();
  const dateOf = new Map(docs.map((d) => [d.id, Number(d.date)]));
  let s: MailSearch;

  before(async () => {
    s = await openMailSearch({ dbName: freshName(), key: await newKey() });
    await s.addMany(docs);
    for (const d of docs) ref.add(d);
  });
  after(() => s.close());

  it('returns exactly the matching messages dated inside the range, ends included', async () => {
    const rand = rng(9);
    for (const terms of queries(11, 30)) {
      const a = Number(docs[Math.floor(rand() * docs.length)].date);
      const b = Number(docs[Math.floor(rand() * docs.length)].date);
      const [from, to] = a < b ? [a, b] : [b, a];
      const want = [...ref.matching(terms)].filter((id) => dateOf.get(id)! >= from && dateOf.get(id)! <= to);
      const got = await s.search(terms.join(' '), { limit: 1000, after: from, before: to });
      assert.deepEqual(new Set(got.map((h) => h.id)), new Set(want), `${terms.join(' ')} in [${from}, ${to}]`);
    }
  });

  it('sorts newest first across shards, so a limit keeps the newest matches', async () => {
    for (const terms of queries(12, 20)) {
      const want = [...ref.matching(terms)].sort((x, y) => dateOf.get(y)! - dateOf.get(x)!).slice(0, 15);
      const got = await s.search(terms.join(' '), { limit: 15, sort: 'date' });
      assert.deepEqual(
        got.map((h) => h.id),
        want,
        terms.join(' '),
      );
    }
  });

  it('without snippets gives the same hits, lines and highlights, read from the shards in memory', async () => {
    const byId = new Map(docs.map((d) => [d.id, d]));
    for (const terms of [...queries(13, 15), ['w1*'], ['subject:w2', '-w3']]) {
      const query = terms.join(' ');
      const full = await s.search(query, { limit: 50 });
      const lines = await s.search(query, { limit: 50, snippets: false });
      assert.deepEqual(
        lines,
        full.map((h) => ({ ...h, snippet: '', highlights: { ...h.highlights, snippet: [] } })),
        query,
      );
      for (const h of lines) {
        const d = byId.get(h.id)!;
        assert.deepEqual([h.subject, h.from, h.url, h.date], [d.subject, d.from, d.url, d.date]);
      }
    }
  });

  it('refuses malformed options', async () => {
    for (const bad of [
      { sort: 'size' },
      { after: Number.NaN },
      { before: 'yesterday' },
      { limit: 0 },
      { snippets: 'no' },
    ]) {
      await assert.rejects(s.search('w1', bad as never), { code: 'bad-input' });
    }
  });
});

describe('first indexing interrupted mid-way', () => {
  it('keeps the batches written before the crash and completes when run again', async () => {
    const name = freshName();
    const key = await newKey();
    const docs = makeDocs(6, 600);
    let s = await openMailSearch({ dbName: name, key });
    // The page dies after the first batch was written: nothing else runs.
    await assert.rejects(
      s.addMany(docs, (done) => {
        if (done > 0) throw new Error('background stopped');
      }),
      /background stopped/,
    );
    await s.close();
    s = await openMailSearch({ dbName: name, key });
    const kept = await s.count();
    assert.ok(kept > 0 && kept < docs.length, `some but not all messages were kept (${kept})`);
    await s.addMany(docs); // resuming is adding again: ids already indexed are replaced, not duplicated
    assert.equal(await s.count(), docs.length);
    assert.equal(await s.has(docs[0].id), true);
    assert.equal(await s.has('never indexed'), false);
    const ref = new Reference();
    for (const d of docs) ref.add(d);
    for (const terms of queries(13, 20)) {
      assert.deepEqual(new Set((await s.search(terms.join(' '), 1000)).map((h) => h.id)), ref.matching(terms));
    }
    await s.close();
  });
});

describe('shards stored by an older version', () => {
  it('are rebuilt from the stored messages when first loaded, and answer as before', async () => {
    const name = freshName();
    const key = await newKey();
    const docs = makeDocs(8, SHARD_SIZE + 10);
    let s = await openMailSearch({ dbName: name, key });
    await s.addMany(docs);
    await s.close();

    // Replace the sealed shard with what version 1 stored: gzip'd lunr JSON, sealed under the same address.
    const db = await openDB(name);
    const wrapped = (await db.get('meta', 'keys')) as { iv: Uint8Array<ArrayBuffer>; ct: ArrayBuffer };
    const raw = new Uint8Array(
      await crypto.subtle.decrypt(
        {
          name: 'AES-GCM',
          iv: wrapped.iv,
          // Format 2 binds the header (a caller's key: no KDF) into the wrapped keys' AAD.
          additionalData: new TextEncoder().encode('pmf-search/v2|meta|keys|format=2|kdf=none'),
        },
        key,
        wrapped.ct,
      ),
    );
    const dataKey = await crypto.subtle.importKey('raw', raw.slice(0, 32), 'AES-GCM', false, ['encrypt']);
    const [shardId] = (await db.getAllKeys('shards')) as number[];
    const legacy = lunr(function () {
      this.ref('id');
      this.field('body');
      this.add({ id: 'x', body: 'old format' });
    });
    const iv = crypto.getRandomValues(new Uint8Array(12));
    const ct = await crypto.subtle.encrypt(
      { name: 'AES-GCM', iv, additionalData: new TextEncoder().encode(`shard|${shardId}`) },
      dataKey,
      await gzip(new TextEncoder().encode(JSON.stringify(legacy.toJSON()))),
    );
    await db.put('shards', { iv, ct }, shardId);
    db.close();

    s = await openMailSearch({ dbName: name, key });
    const ref = new Reference();
    for (const d of docs) ref.add(d);
    for (const terms of queries(14, 20)) {
      assert.deepEqual(new Set((await s.search(terms.join(' '), 1000)).map((h) => h.id)), ref.matching(terms));
    }
    await s.close();
    const after = await openDB(name);
    const ids = (await after.getAllKeys('shards')) as number[];
    after.close();
    assert.equal(ids.length, 1);
    assert.notEqual(ids[0], shardId, 'the old record was replaced by a rebuilt one');
  });
});

describe('answers while the index is still opening', () => {
  it('answers from the newest shards first, then completes to the exact answer', async () => {
    const name = freshName();
    const key = await newKey();
    const docs = makeDocs(15, 3 * SHARD_SIZE + 50);
    let s = await openMailSearch({ dbName: name, key });
    await s.addMany(docs);
    await s.close();
    const ref = new Reference();
    for (const d of docs) ref.add(d);
    const newest = new Set(docs.slice(SHARD_SIZE).map((d) => d.id)); // the two newest shards and the hot one

    s = await openMailSearch({ dbName: name, key });
    const [terms] = queries(16, 1);
    const first = await s.searchSoon(terms.join(' '), { limit: 1000 });
    assert.equal(first.complete, false);
    const want = ref.matching(terms);
    assert.deepEqual(new Set(first.hits.map((h) => h.id)), new Set([...want].filter((id) => newest.has(id))));
    let answer = first;
    for (let i = 0; i < 10 && !answer.complete; i++) answer = await s.searchSoon(terms.join(' '), { limit: 1000 });
    assert.equal(answer.complete, true);
    assert.deepEqual(new Set(answer.hits.map((h) => h.id)), want);
    await s.close();
  });
});
