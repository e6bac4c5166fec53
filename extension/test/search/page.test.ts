// The pieces of the search page that decide what reaches the DOM, the
// page↔background message contract, and the no-network rule.
import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { answerSearchRequest, isSearchRequest, openMailSearch, SEARCH_MESSAGE, segments } from '../../search/index.js';
import lunr from 'lunr';
import { indexPipeline } from '../../search/lunr-shard.js';
import { makeSnippet, matchRanges } from '../../search/snippet.js';
import { rng } from './corpus.js';
import { safeUrl } from '../../search/view.js';

const here = path.dirname(fileURLToPath(import.meta.url));

describe('highlighting', () => {
  it('splits text into marked and plain pieces that concatenate back to the text', () => {
    const text = '<b>launch</b> & launches';
    const pieces = segments(text, [
      { start: 16, end: 24 },
      { start: 3, end: 9 },
    ]);
    assert.equal(pieces.map((p) => p.text).join(''), text);
    assert.deepEqual(
      pieces.filter((p) => p.mark).map((p) => p.text),
      ['launch', 'launches'],
    );
  });

  it('ignores overlapping and out-of-range ranges instead of duplicating text', () => {
    const pieces = segments('abcdef', [
      { start: 1, end: 4 },
      { start: 2, end: 5 },
      { start: 5, end: 99 },
    ]);
    assert.equal(pieces.map((p) => p.text).join(''), 'abcdef');
  });

  it('marks every inflection of a matched stem, and nothing else', () => {
    const text = 'Launching the launch; the launcher launched. Lunch?';
    const words = matchRanges(text, new Set(['launch'])).map((r) => text.slice(r.start, r.end));
    assert.deepEqual(words, ['Launching', 'launch;', 'launched.']);
  });

  it('finds the same words as lunr tokenizer + index pipeline on messy text', () => {
    const rand = rng(7);
    const words = [
      'Launch',
      'launches',
      '(rocket)',
      '"Rockets,"',
      'co-op',
      'über',
      '--fuel',
      'FUELING',
      'x',
      'the',
      'e-mail',
    ];
    const seps = [' ', '  ', '\n', '-', '\t'];
    const pick = <T>(xs: T[]) => xs[Math.floor(rand() * xs.length)];
    const pipeline = indexPipeline();
    for (let round = 0; round < 50; round++) {
      const text = Array.from({ length: 30 }, () => pick(words) + pick(seps)).join('');
      const terms = new Set(['launch', 'rocket', 'fuel', 'op', 'mail', 'ber'].filter(() => rand() < 0.6));
      const want: { start: number; end: number }[] = [];
      for (const tok of lunr.tokenizer(text)) {
        const [start, len] = (tok as unknown as { metadata: { position: [number, number] } }).metadata.position;
        const [out] = pipeline.run([tok]);
        if (out && terms.has(out.toString())) want.push({ start, end: start + len });
      }
      assert.deepEqual(matchRanges(text, terms), want, JSON.stringify({ text, terms: [...terms] }));
    }
  });

  it('cuts a snippet around the first match, deep inside a long body', () => {
    const body = `${'intro words '.repeat(200)}the rocket launches at dawn ${'tail words '.repeat(100)}`;
    const s = makeSnippet(body, new Set(['launch']));
    assert.ok(s.text.startsWith('…') && s.text.endsWith('…'));
    assert.ok(s.text.length <= 230);
    assert.deepEqual(
      s.ranges.map((r) => s.text.slice(r.start, r.end)),
      ['launches'],
    );
  });
});

describe('result links', () => {
  it('allows web and extension pages only', () => {
    assert.equal(safeUrl('https://mail.example/#inbox/1'), 'https://mail.example/#inbox/1');
    assert.equal(safeUrl('moz-extension://abc/viewer.html?id=1'), 'moz-extension://abc/viewer.html?id=1');
    for (const bad of [
      'javascript:alert(1)',
      'JaVaScRiPt:alert(1)',
      'data:text/html,<script>',
      'file:///etc/passwd',
      'not a url',
      '',
    ]) {
      assert.equal(safeUrl(bad), undefined, bad);
    }
  });
});

describe('search page messages', () => {
  it('recognizes only well-formed search requests', () => {
    assert.ok(isSearchRequest({ type: SEARCH_MESSAGE, query: 'x' }));
    for (const bad of [
      null,
      'x',
      { type: SEARCH_MESSAGE },
      { type: 'other', query: 'x' },
      { type: SEARCH_MESSAGE, query: 1 },
    ]) {
      assert.ok(!isSearchRequest(bad));
    }
  });

  it('answers locked, success and bad-input cases without throwing', async () => {
    const locked = await answerSearchRequest({ type: SEARCH_MESSAGE, query: 'x' }, null);
    assert.deepEqual(locked.ok ? undefined : locked.code, 'locked');
    const key = await crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
    const s = await openMailSearch({ dbName: `page-${process.pid}`, key });
    await s.add({ id: '1', from: 'a@b.example', subject: 'Hello', date: 1, body: 'rocket' });
    const ok = await answerSearchRequest({ type: SEARCH_MESSAGE, query: 'rocket' }, s);
    assert.ok(ok.ok && ok.total === 1 && ok.hits[0].id === '1' && ok.hits[0].snippet === 'rocket');
    // The page's first request: result lines only; snippets come with the second.
    const lines = await answerSearchRequest({ type: SEARCH_MESSAGE, query: 'rocket', snippets: false }, s);
    assert.ok(lines.ok && lines.hits[0].subject === 'Hello' && lines.hits[0].snippet === '');
    const bad = await answerSearchRequest({ type: SEARCH_MESSAGE, query: 'rocket', limit: -1 }, s);
    assert.ok(!bad.ok && bad.code === 'bad-input');
    await s.close();
  });
});

describe('no network', () => {
  it('no source file of the search module can reach the network', () => {
    const dir = path.resolve(here, '../../search');
    const sources = fs.readdirSync(dir).filter((f) => f.endsWith('.ts') || f.endsWith('.html'));
    assert.ok(sources.length >= 8);
    for (const f of sources) {
      const text = fs.readFileSync(path.join(dir, f), 'utf8');
      for (const api of [
        /\bfetch\s*\(/,
        /XMLHttpRequest/,
        /WebSocket/,
        /sendBeacon/,
        /EventSource/,
        /importScripts/,
        /<(img|iframe|link)[^>]+https?:/,
      ]) {
        assert.doesNotMatch(text, api, `${f} uses ${api}`);
      }
    }
  });
});
