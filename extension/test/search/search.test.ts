// MailSearch against a brute-force reference, across shard boundaries, through
// close/reopen, removals, replacements and compaction.
import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import lunr from 'lunr';
import { deleteMailSearch, MailSearch, openMailSearch, SHARD_SIZE } from '../../search/index.js';
import { makeDoc, makeDocs, queries, Reference, rng, VOCAB } from './corpus.js';

const newKey = () => crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
let dbCounter = 0;
const freshName = () => `search-test-${process.pid}-${dbCounter++}`;

// The module must never touch the network: any attempt fails the test run.
const realFetch = globalThis.fetch;
before(() => {
  globalThis.fetch = () => {
    throw new Error('network access from the search index');
  };
});
after(() => {
  globalThis.fetch = realFetch;
});

async function ids(s: MailSearch, q: string): Promise<Set<string>> {
  return new Set((await s.search(q, 1000)).map((h) => h.id));
}

/** Equal sets, or (past the 1000-hit limit) 1000 hits all in the reference set. */
function assertSameHits(got: Set<string>, want: Set<string>, what: string): void {
  if (want.size <= 1000) assert.deepEqual(got, want, what);
  else {
    assert.equal(got.size, 1000, what);
    for (const id of got) assert.ok(want.has(id), `${what}: ${id} should not match`);
  }
}

async function assertMatchesReference(s: MailSearch, ref: Reference, seed: number, n = 40): Promise<void> {
  for (const terms of queries(seed, n)) {
    assertSameHits(await ids(s, terms.join(' ')), ref.matching(terms), `query "${terms.join(' ')}"`);
  }
  assert.equal(await s.count(), ref.docs.size);
}

describe('vocabulary of the synthetic corpus', () => {
  it('is left unchanged by lunr pipeline functions, so the reference may split on spaces', () => {
    for (let i = 0; i < VOCAB; i++) {
      const w = `w${i}`;
      assert.equal(lunr.stemmer(new lunr.Token(w, {})).toString(), w);
      assert.equal(lunr.trimmer(new lunr.Token(w, {})).toString(), w);
    }
  });
});

describe('MailSearch across shards', () => {
  const docs = makeDocs(1, 2 * SHARD_SIZE + 400, 'm', true);
  const ref = new Reference();
  let key: CryptoKey;
  let name: string;
  let s: MailSearch;

  before(async () => {
    key = await newKey();
    name = freshName();
    s = await openMailSearch({ dbName: name, key });
    const progress: [number, number][] = [];
    await s.addMany(docs, (done, total) => progress.push([done, total]));
    for (const d of docs) ref.add(d);
    assert.deepEqual(progress.at(-1), [docs.length, docs.length]);
    assert.ok(
      progress.every(([d], i) => i === 0 || d > progress[i - 1][0]),
      'progress increases',
    );
  });
  after(() => s.close());

  it('seals full shards and keeps the rest hot', async () => {
    const st = await s.stats();
    assert.equal(st.sealedShards, 2);
    assert.equal(st.hotDocs, 400);
    assert.equal(st.count, docs.length);
  });

  it('finds exactly the documents containing all query terms', async () => {
    await assertMatchesReference(s, ref, 11);
  });

  it('scores with global idf, so ranks agree with a single-index BM25 across shards', async () => {
    for (const terms of queries(12, 25)) {
      const want = ref.scores(terms);
      const hits = await s.search(terms.join(' '), 1000);
      assert.equal(hits.length, Math.min(1000, want.size));
      for (const h of hits) {
        const w = want.get(h.id)!;
        assert.ok(Math.abs(h.score - w) <= 0.005 * terms.length * 3, `${terms}: ${h.id} ${h.score} vs ${w}`);
      }
      for (let i = 1; i < hits.length; i++) assert.ok(hits[i - 1].score >= hits[i].score, 'sorted best first');
    }
  });

  it('honours limit and returns the top-scoring documents', async () => {
    const all = await s.search('w1', 1000);
    const top = await s.search('w1', 5);
    assert.deepEqual(
      top.map((h) => h.id),
      all.slice(0, 5).map((h) => h.id),
    );
  });

  it('supports prefix wildcards, negation and field scoping like the reference', async () => {
    const prefix = [...ref.docs.values()].filter((d) =>
      `${d.subject} ${d.body}`.split(' ').some((t) => t.startsWith('w29')),
    );
    assert.deepEqual(await ids(s, 'w29*'), new Set(prefix.map((d) => d.id)));
    assertSameHits(await ids(s, 'w2 -w3'), ref.matching(['w2'], ['w3']), 'w2 -w3');
    assertSameHits(await ids(s, 'subject:w4'), ref.matching(['w4'], [], 'subject'), 'subject:w4');
  });

  it('highlights exactly the query words in the subject and snippet of hits from every shard', async () => {
    const marked = (t: string, rs: { start: number; end: number }[]) => rs.map((r) => t.slice(r.start, r.end));
    const cases: [string, (w: string) => boolean][] = [
      ...queries(14, 10).map((terms): [string, (w: string) => boolean] => [terms.join(' '), (w) => terms.includes(w)]),
      ['w29*', (w) => w.startsWith('w29')],
      ['w2 -w3', (w) => w === 'w2'],
    ];
    const shards = new Set<number>();
    for (const [query, isQueryWord] of cases) {
      for (const h of await s.search(query, 1000)) {
        shards.add((Number(h.id.slice(1)) / SHARD_SIZE) | 0);
        assert.deepEqual(marked(h.subject, h.highlights.subject), h.subject.split(' ').filter(isQueryWord), query);
        // Bodies are short: the snippet is the whole body, uncut.
        assert.deepEqual(marked(h.snippet, h.highlights.snippet), h.snippet.split(' ').filter(isQueryWord), query);
      }
    }
    assert.equal(shards.size, 3, 'hits from both sealed shards and the hot one');
  });

  it('survives close and reopen with identical answers', async () => {
    await s.close();
    s = await openMailSearch({ dbName: name, key });
    await assertMatchesReference(s, ref, 13);
  });

  it('applies removals and replacements in sealed and hot shards', async () => {
    const rand = rng(5);
    const victims = [docs[3], docs[SHARD_SIZE + 7], docs[docs.length - 2]].map((d) => d.id);
    for (const id of victims) {
      assert.equal(await s.remove(id), true);
      ref.remove(id);
    }
    assert.equal(await s.remove('never-indexed'), false);
    for (const d of [docs[10], docs[SHARD_SIZE + 20], docs[docs.length - 1]]) {
      const replacement = { ...makeDoc(rand, d.id), body: `${d.body} w299 w299` };
      await s.add(replacement);
      ref.add(replacement);
    }
    await assertMatchesReference(s, ref, 14);
    assert.deepEqual(await ids(s, 'w299'), ref.matching(['w299']));
    await s.close();
    s = await openMailSearch({ dbName: name, key });
    await assertMatchesReference(s, ref, 15);
  });

  it('compacts a shard whose tombstones pass the threshold and still answers like the reference', async () => {
    const before = await s.stats();
    for (const d of docs.slice(0, 300)) {
      if (ref.docs.has(d.id) && ref.docs.get(d.id) === d) {
        await s.remove(d.id);
        ref.remove(d.id);
      }
    }
    const st = await s.stats();
    assert.ok(st.tombstones < before.tombstones + 300, 'tombstones were dropped by compaction');
    await assertMatchesReference(s, ref, 16);
    await s.close();
    s = await openMailSearch({ dbName: name, key });
    await assertMatchesReference(s, ref, 17);
  });

  it('keeps adding after compaction, sealing new shards', async () => {
    const more = makeDocs(2, SHARD_SIZE, 'n');
    await s.addMany(more);
    for (const d of more) ref.add(d);
    await assertMatchesReference(s, ref, 18);
  });
});

describe('MailSearch results', () => {
  let s: MailSearch;
  before(async () => {
    s = await openMailSearch({ dbName: freshName(), key: await newKey() });
    await s.addMany([
      {
        id: '<launch@example.org>',
        from: 'Ann Lee <ann.lee@example.org>',
        to: 'bob@example.net',
        subject: 'Launch window moved',
        date: '2024-05-01T10:00:00Z',
        body: 'Hi Bob, the rocket launches on Friday. <b>Bring</b> the "telemetry" logs & coffee.',
        url: 'https://mail.example/#inbox/launch',
      },
      { id: 'lunch', from: 'Cy <cy@example.net>', subject: 'Lunch', date: 0, body: 'Lunch on Friday?' },
    ]);
  });
  after(() => s.close());

  it('returns metadata, the URL and a snippet with stemmed matches highlighted', async () => {
    const [hit, ...rest] = await s.search('launch');
    assert.equal(rest.length, 0);
    assert.equal(hit.id, '<launch@example.org>');
    assert.equal(hit.from, 'Ann Lee <ann.lee@example.org>');
    assert.equal(hit.to, 'bob@example.net');
    assert.equal(hit.date, Date.parse('2024-05-01T10:00:00Z'));
    assert.equal(hit.url, 'https://mail.example/#inbox/launch');
    const marked = (t: string, rs: { start: number; end: number }[]) => rs.map((r) => t.slice(r.start, r.end));
    assert.deepEqual(marked(hit.subject, hit.highlights.subject), ['Launch']);
    assert.deepEqual(marked(hit.snippet, hit.highlights.snippet), ['launches']);
    assert.ok(hit.snippet.includes('<b>Bring</b>'), 'snippet is raw text; the page escapes it');
  });

  it('ANDs terms, ignores stop words and searches unparseable text as words', async () => {
    assert.equal((await s.search('friday')).length, 2);
    assert.equal((await s.search('friday rocket')).length, 1);
    assert.equal((await s.search('the')).length, 0);
    assert.equal((await s.search('the rocket')).length, 1);
    assert.equal((await s.search('rocket ... !')).length, 1);
    assert.equal((await s.search('rocket: friday')).length, 1, 'unknown field "rocket" → plain words');
    assert.equal((await s.search('')).length, 0);
  });

  it('finds mail by sender address parts', async () => {
    assert.deepEqual(
      (await s.search('example.org')).map((h) => h.id),
      ['<launch@example.org>'],
    );
    assert.deepEqual(
      (await s.search('from:cy')).map((h) => h.id),
      ['lunch'],
    );
  });
});

describe('MailSearch operations', () => {
  it('runs overlapping calls one at a time, each seeing the previous one', async () => {
    const name = freshName();
    const key = await newKey();
    const s = await openMailSearch({ dbName: name, key });
    const docs = makeDocs(21, 30);
    const pending = [
      s.addMany(docs.slice(0, 20)),
      s.search('w1', 1000),
      s.remove(docs[0].id),
      s.add({ ...docs[1], body: 'zebra' }),
      s.addMany(docs.slice(20)),
      s.search('zebra'),
      s.count(),
    ] as const;
    const [, , removed, , , zebra, count] = await Promise.all(pending);
    assert.equal(removed, true);
    assert.deepEqual(
      zebra.map((h) => h.id),
      [docs[1].id],
    );
    assert.equal(count, 29);
    await s.close();
    await deleteMailSearch(name);
    const fresh = await openMailSearch({ dbName: name, key: await newKey() });
    assert.equal(await fresh.count(), 0, 'deleteMailSearch removed everything; a new key starts a new index');
    await fresh.close();
  });
});
