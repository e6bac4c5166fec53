// The shard builder must weigh every (term, field, document) exactly as a
// lunr index of the same mail does, and a stored shard must answer exactly as
// the one it was made from.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { describe, it } from 'node:test';
import zlib from 'node:zlib';
import lunr from 'lunr';
import { CompactShard, WEIGHT_SCALE } from '../../search/compact-shard.js';
import {
  compileQuery,
  FIELD_BOOST,
  FIELDS,
  indexPipeline,
  isSeparator,
  isWordChar,
  parseQuery,
  withAddressParts,
  type IndexableDoc,
} from '../../search/lunr-shard.js';
import { SHARD_SIZE } from '../../search/mail-search.js';
import { ShardBuilder } from '../../search/shard-builder.js';
import { TermTable } from '../../search/term-table.js';
import { TopHits } from '../../search/top-hits.js';
import { makeDocs, rng } from './corpus.js';

const NASTY = ['say "hi"', 'br{ace}s', 'back\\slash', 'brack]et,', 'ünïcødé 日本語', 'tab\there', 'emoji 🚀launch'];

function nastyDocs(): IndexableDoc[] {
  return NASTY.map((body, i) => ({
    id: `nasty ${body}`,
    seq: i * 37,
    date: 1_700_000_000_000 + i * 86_400_000,
    subject: `s${i} rocket`,
    from: 'Ann <ann.lee@b.example>',
    to: '',
    body,
  }));
}

/** Real-looking mail: varied lengths, repeated words, stop words, addresses. */
function mailDocs(): IndexableDoc[] {
  return makeDocs(7, 300).map((d, i) => ({
    id: d.id,
    seq: i,
    date: Number(d.date),
    subject: d.subject,
    from: d.from,
    to: i % 3 ? 'Bob <bob@c.example>' : '',
    body: `${d.body} the launches of rockets ${'fuel '.repeat(i % 5)}${i % 7 ? 'mission' : ''}`,
  }));
}

/** 20 Newsgroups (shared evaluation data, outside the repository): real mail text, when present. */
const NEWSGROUPS = new URL('../../../../shared/datasets/20news-bydate.jsonl.gz', import.meta.url);

function newsgroupDocs(n: number): IndexableDoc[] {
  const lines = zlib.gunzipSync(fs.readFileSync(NEWSGROUPS)).toString('utf8').split('\n', n);
  return lines.map((line, i) => {
    const { id, text } = JSON.parse(line) as { id: string; text: string };
    const cut = text.indexOf('\n\n');
    const head = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(text.slice(0, cut))?.[1] ?? '';
    return { id, seq: i, date: i, subject: head('Subject'), from: head('From'), body: text.slice(cut + 2) };
  });
}

function build(docs: IndexableDoc[]): CompactShard {
  const b = new ShardBuilder();
  for (const d of docs) b.add(d);
  return b.build();
}

const results = (s: CompactShard, query: string, range?: { from: number; to: number }) => {
  const q = compileQuery(parseQuery(query));
  const top = new TopHits(1000, 'relevance');
  const exp = s.expand(q);
  s.run(q, exp, new Map(exp.flat().map(({ term }) => [term, 1])), new Set(), range, 0, top);
  return top.best;
};

/** Each (field, seq, term) → weight, from lunr.Builder with the same fields, boosts and pipeline. */
function lunrWeights(docs: IndexableDoc[]): Map<string, number> {
  const b = new lunr.Builder();
  b.pipeline = indexPipeline();
  b.ref('seq');
  for (const f of FIELDS) {
    const extractor =
      f === 'from' || f === 'to' ? (d: object) => withAddressParts((d as IndexableDoc)[f] ?? '') : undefined;
    b.field(f, { boost: FIELD_BOOST[f], extractor });
  }
  for (const d of docs) b.add({ ...d, seq: String(d.seq) });
  const json = b.build().toJSON() as unknown as {
    invertedIndex: [string, { _index: number }][];
    fieldVectors: [string, number[]][];
  };
  const termOf: string[] = [];
  for (const [term, p] of json.invertedIndex) termOf[p._index] = term;
  const out = new Map<string, number>();
  for (const [fieldRef, v] of json.fieldVectors) {
    for (let i = 0; i < v.length; i += 2) out.set(`${fieldRef}/${termOf[v[i]]}`, v[i + 1]);
  }
  return out;
}

/** Each (field, seq, term) → weight, read back out of a compact shard through its serialized form. */
function compactWeights(shard: CompactShard): Map<string, number> {
  const bytes = shard.serialize();
  const u32 = new Uint32Array(bytes.buffer, 0, 7);
  const [, , n, T, P, docWidth, termLength] = u32;
  let at = 32;
  at += n * 8;
  const seqs = new Int32Array(bytes.buffer, at, n);
  at += n * 4;
  at += (n + 1) * 4; // the doc table's offsets
  const offsets = new Int32Array(bytes.buffer, at, T * FIELDS.length + 1);
  at += offsets.byteLength;
  const docs = docWidth === 2 ? new Uint16Array(bytes.buffer, at, P) : new Uint32Array(bytes.buffer, at, P);
  at += docs.byteLength;
  const weights = new Uint16Array(bytes.buffer, at, P);
  at += weights.byteLength;
  const terms = new TextDecoder().decode(bytes.subarray(at, at + termLength)).split('\n');
  const out = new Map<string, number>();
  terms.forEach((term, t) =>
    FIELDS.forEach((field, f) => {
      for (let i = offsets[t * FIELDS.length + f]; i < offsets[t * FIELDS.length + f + 1]; i++) {
        out.set(`${field}/${seqs[docs[i]]}/${term}`, weights[i] / WEIGHT_SCALE);
      }
    }),
  );
  return out;
}

describe('ShardBuilder', () => {
  it('gives every (term, field, message) the weight lunr gives it', () => {
    for (const docs of [nastyDocs(), mailDocs()]) {
      const want = lunrWeights(docs);
      const got = compactWeights(build(docs));
      // lunr also lists fields with no terms; both list every term occurrence.
      assert.deepEqual(got, want);
    }
  });

  it('adds messages prepared ahead (as a writer does), or by another builder, as lunr does', () => {
    const docs = mailDocs();
    const want = lunrWeights(docs);
    // Batches prepared before any of them is added: term ids known from earlier batches only.
    const b = new ShardBuilder();
    for (let i = 0; i < docs.length; i += 50) {
      const batch = docs.slice(i, i + 50).map((d) => b.prepare(d));
      for (const p of batch) b.add(p);
    }
    assert.deepEqual(compactWeights(b.build()), want);
    // Prepared by a builder that has all the terms (its ids are not this one's).
    const other = new ShardBuilder();
    for (const d of [...docs].reverse()) other.add({ ...d, seq: 0 - d.seq });
    const c = new ShardBuilder();
    for (const d of docs) c.add(other.prepare(d));
    assert.deepEqual(compactWeights(c.build()), want);
  });

  it('tokenizes real mail as lunr does, before and after its word memo rolls over', (t) => {
    if (!fs.existsSync(NEWSGROUPS)) return t.skip('20 Newsgroups is not in ../shared/datasets');
    const docs = newsgroupDocs(200);
    const want = lunrWeights(docs);
    assert.deepEqual(compactWeights(build(docs)), want); // words met for the first time
    assert.deepEqual(compactWeights(build(docs)), want); // all from the memo
    // More new words than the memo holds (two generations of 100,000): the words above are dropped.
    const filler = Array.from({ length: 210_000 }, (_, i) => `zq${i.toString(36)}`).join(' ');
    new ShardBuilder().prepare({ ...docs[0], body: filler });
    assert.deepEqual(compactWeights(build(docs)), want);
  });

  it("answers a query from the terms it reaches alone, with all its weights' values: lunr's", () => {
    // A full hot shard of real mail when present (the production SHARD_SIZE).
    const docs = fs.existsSync(NEWSGROUPS) ? newsgroupDocs(SHARD_SIZE) : mailDocs();
    const want = lunrWeights(docs);
    const hot = new ShardBuilder();
    for (const d of docs) hot.add(d);
    const full = build(docs);
    const termOf = (key: string) => key.slice(key.indexOf('/', key.indexOf('/') + 1) + 1);
    let reached = 0;
    for (const query of [
      'god',
      'image graphics',
      'subject:re',
      'from:edu',
      'windows -dos',
      'comput*',
      '*ware',
      'probelm~1',
      'atheist^3 bible',
      'the',
      'zzqqxx',
    ]) {
      const part = hot.forQuery(compileQuery(parseQuery(query)));
      const got = compactWeights(part);
      const terms = new Set([...got.keys()].map(termOf));
      reached += terms.size;
      assert.ok(terms.size < 200, `${query}: only the terms the query reaches`);
      assert.deepEqual(got, new Map([...want].filter(([key]) => terms.has(termOf(key)))), query);
      assert.deepEqual(results(part, query), results(full, query), query);
      for (const local of [0, docs.length - 1]) assert.deepEqual(part.doc(local), full.doc(local));
    }
    assert.ok(reached >= 15, `${reached} terms reached`);
  });

  it("splits and trims tokens on exactly lunr's characters", () => {
    for (let c = 0; c < 0x10000; c++) {
      const ch = String.fromCharCode(c);
      assert.equal(isSeparator(c), /[\s-]/.test(ch), `separator U+${c.toString(16)}`);
      assert.equal(isWordChar(c), /\w/.test(ch), `word character U+${c.toString(16)}`);
    }
  });

  it('refuses messages out of sequence order', () => {
    const b = new ShardBuilder();
    b.add(nastyDocs()[1]);
    assert.throws(() => b.add(nastyDocs()[0]), /sequence order/);
  });
});

describe('CompactShard', () => {
  it('answers from its stored bytes exactly as before storing, odd terms included', () => {
    const shard = build(nastyDocs());
    const stored = CompactShard.deserialize(shard.serialize());
    for (const query of [
      'rocket',
      'hi',
      'br{ace}s',
      'ünïcødé',
      '日本語',
      'launch',
      's3',
      'r*',
      'ro*',
      '-rocket',
      'rokcet~2',
    ]) {
      assert.deepEqual(results(stored, query), results(shard, query), query);
    }
    assert.equal(results(stored, 'ro*').length, NASTY.length);
    // What result lines show comes back from the stored bytes too, absent fields staying absent.
    nastyDocs().forEach(({ id, subject, from, to }, local) => {
      assert.deepEqual(stored.doc(local), { id, subject, from, to });
    });
    const noTo = build([{ ...nastyDocs()[0], to: undefined, url: 'https://mail.test/1' }]);
    assert.deepEqual(CompactShard.deserialize(noTo.serialize()).doc(0), {
      id: nastyDocs()[0].id,
      subject: nastyDocs()[0].subject,
      from: nastyDocs()[0].from,
      url: 'https://mail.test/1',
    });
  });

  it('rejects bytes that are not a shard, or are cut short', () => {
    const bytes = build(nastyDocs()).serialize();
    assert.equal(CompactShard.recognizes(new TextEncoder().encode('{"version":"2.3.9"')), false);
    assert.throws(() => CompactShard.deserialize(bytes.slice(0, bytes.length - 1)));
  });

  it('keeps only messages dated inside a date filter', () => {
    const shard = build(nastyDocs());
    const day = 86_400_000;
    const from = 1_700_000_000_000 + 2 * day;
    const got = results(shard, 'rocket', { from, to: from + 2 * day })
      .map((h) => h.seq)
      .sort((a, b) => a - b);
    assert.deepEqual(got, [2 * 37, 3 * 37, 4 * 37]);
    assert.equal(shard.overlaps({ from: 0, to: from - 3 * day }), false);
  });
});

/** UTF-8 byte order, the order a TermTable keeps. */
function byBytes(terms: string[]): string[] {
  const bytes = (t: string) => [...new TextEncoder().encode(t)];
  return [...terms].sort((a, b) => {
    const [x, y] = [bytes(a), bytes(b)];
    for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
    return x.length - y.length;
  });
}

describe('TermTable', () => {
  it('sorts many terms sharing prefixes in UTF-8 byte order, with and without units from U+D800', () => {
    // Units around the sort key's cut (253, 254, 255), surrogate pairs and U+E000 after them.
    const units = ['a', 'b', '0', '_', '.', '\u0000', '\u00fd', '\u00fe', '\u00ff', 'é', '日', '\u{e000}', '🚀'];
    const rand = rng(5);
    const make = (alphabet: string[]) => {
      const terms = new Set(['']);
      while (terms.size < 20_000) {
        let t = '';
        for (let n = Math.floor(rand() * 8); n > 0; n--) t += alphabet[Math.floor(rand() * alphabet.length)];
        terms.add(t);
      }
      return [...terms];
    };
    for (const terms of [make(units.slice(0, 10)), make(units)]) {
      assert.deepEqual(
        TermTable.sorted(terms).order.map((i) => terms[i]),
        byBytes(terms),
      );
    }
  });

  it('finds every term and lower bound of 20,000 sharing long prefixes as a scan does', () => {
    // Terms sharing their first 4 bytes over many samples, shorter than 4 bytes, with NUL and 0xff bytes.
    const units = ['a', 'b', '\u0000', '\u00ff', 'é', '日', '🚀'];
    const rand = rng(11);
    const set = new Set<string>(['', 'a', 'aaaa', 'aaa', 'aaaab']);
    while (set.size < 20_000) {
      let t = rand() < 0.5 ? 'aaaa' : '';
      for (let n = Math.floor(rand() * 7); n > 0; n--) t += units[Math.floor(rand() * units.length)];
      set.add(t);
    }
    const terms = [...set];
    const sorted = byBytes(terms);
    const { table } = TermTable.sorted(terms);
    const encode = (t: string) => new TextEncoder().encode(t);
    const sortedBytes = sorted.map(encode);
    const cmp = (x: Uint8Array, y: Uint8Array) => {
      for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
      return x.length - y.length;
    };
    for (let i = 0; i < 3000; i++) {
      const present = sorted[Math.floor(rand() * sorted.length)];
      assert.equal(table.find(present), sorted.indexOf(present), `find ${JSON.stringify(present)}`);
      const probe = encode(present + units[Math.floor(rand() * units.length)].repeat(Math.floor(rand() * 2)));
      // The reference: a plain binary search over the sorted UTF-8 terms.
      let [lo, hi] = [0, sortedBytes.length];
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cmp(sortedBytes[mid], probe) < 0) lo = mid + 1;
        else hi = mid;
      }
      assert.equal(table.lowerBound(probe), lo, `lowerBound ${JSON.stringify([...probe])}`);
    }
  });

  it('sorts short, accented and numeric terms in UTF-8 byte order too', () => {
    const terms = ['rocket', 'rock', 'ünï', 'u', 'z', '日本', 'ǆ', 'é', 'e\u0301', '10', '9', 'ab', 'a'];
    assert.deepEqual(
      TermTable.sorted(terms).order.map((i) => terms[i]),
      byBytes(terms),
    );
  });

  it('finds terms and prefix ranges exactly as a scan of the term list does, in code point order', () => {
    const terms = [
      'rocket',
      'rock',
      'rocks',
      'r',
      'ro',
      'zebra',
      '日本語',
      '日本',
      '\u{e000}x',
      '🚀launch',
      'ünï',
      'a',
      'ab',
    ];
    const { table, order } = TermTable.sorted(terms);
    const byCodePoint = [...terms].sort((a, b) => {
      const [x, y] = [[...a].map((c) => c.codePointAt(0)!), [...b].map((c) => c.codePointAt(0)!)];
      for (let i = 0; i < Math.min(x.length, y.length); i++) if (x[i] !== y[i]) return x[i] - y[i];
      return x.length - y.length;
    });
    assert.deepEqual(
      order.map((i) => terms[i]),
      byCodePoint,
    );
    for (let i = 0; i < table.size; i++) assert.equal(table.term(i), byCodePoint[i]);
    for (const probe of [...terms, 'roc', 'zz', '', '日', '🚀', 'rockets']) {
      assert.equal(table.find(probe), byCodePoint.indexOf(probe), `find ${probe}`);
      const { from, to } = table.withPrefix(probe);
      const want = byCodePoint.flatMap((t, i) => (t.startsWith(probe) ? [i] : []));
      assert.deepEqual(
        Array.from({ length: to - from }, (_, k) => from + k),
        want,
        `prefix ${probe}`,
      );
    }
    assert.equal(new TermTable(new Uint8Array(0)).size, 0);
  });
});
