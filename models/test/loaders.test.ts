import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import zlib from 'node:zlib';
import {
  datasetsDir,
  hashSplit,
  loadJsonl,
  loadMaildir,
  loadMbox,
  loadReuters,
  loadSpamAssassin,
  loadTwentyNews,
  randomSplit,
  splitMbox,
} from '../data/loaders.js';
import { featurize } from '../data/featurize.js';
import { labelOrder, loadSources } from '../data/sources.js';
import { makeSpec } from '../features/index.js';
import { libsvmLine, parseLibsvmLine } from '../data/libsvm.js';
import { tempDir } from '../../scripts/test/temp-dir.js';

const tmp = () => tempDir('pmf-loaders-');
const text = (raw: string | Uint8Array) => (typeof raw === 'string' ? raw : new TextDecoder().decode(raw));

test('SpamAssassin: 6046 messages, 1896 spam, deterministic ~20% held out', () => {
  const sa = loadSpamAssassin();
  assert.equal(sa.length, 6046);
  assert.equal(sa.filter((e) => e.label === 'spam').length, 500 + 1396);
  assert.equal(new Set(sa.map((e) => e.id)).size, sa.length);
  const test = sa.filter((e) => e.split === 'test').length / sa.length;
  assert.ok(test > 0.18 && test < 0.22, `held-out share ${test}`);
  assert.deepEqual(
    loadSpamAssassin().map((e) => e.split),
    sa.map((e) => e.split),
  );
});

test('20 Newsgroups bydate and Reuters ModApte from the shared datasets', () => {
  assert.ok(fs.existsSync(datasetsDir()), `datasets at ${datasetsDir()}`);
  const news = loadTwentyNews();
  assert.equal(news.filter((e) => e.split === 'train').length, 11314);
  assert.equal(news.filter((e) => e.split === 'test').length, 7532);
  assert.equal(new Set(news.map((e) => e.label)).size, 20);
  const reuters = loadReuters();
  const labels = new Set(reuters.map((e) => e.label));
  assert.ok(labels.has('earn') && labels.has('acq') && labels.size <= 90);
  // Single-label R90 subset: every doc has one label that occurs in both splits.
  assert.ok(reuters.filter((e) => e.split === 'test').length > 2500);
  assert.ok(text(reuters[0].raw).startsWith('Subject: '));
});

test('JSON lines, plain and gzip, with clear errors for bad records', () => {
  const dir = tmp();
  const lines = [
    JSON.stringify({ label: 'spam', text: 'Subject: win\n\nmoney now', id: 'a' }),
    '',
    JSON.stringify({ label: 'ham', text: 'just a body line: with a colon', split: 'test' }),
    JSON.stringify({ label: 7, raw: 'Subject: raw means text' }),
  ].join('\n');
  fs.writeFileSync(path.join(dir, 'd.jsonl'), lines);
  fs.writeFileSync(path.join(dir, 'd.jsonl.gz'), zlib.gzipSync(lines));
  for (const f of ['d.jsonl', 'd.jsonl.gz']) {
    const ex = loadJsonl(path.join(dir, f));
    assert.deepEqual(
      ex.map((e) => [e.id, e.label, e.split]),
      [
        ['a', 'spam', undefined],
        [`${f}#3`, 'ham', 'test'],
        [`${f}#4`, '7', undefined],
      ],
    );
    // Text is kept as given: the MIME parser reads text without headers as all body.
    assert.deepEqual(
      ex.map((e) => text(e.raw)),
      ['Subject: win\n\nmoney now', 'just a body line: with a colon', 'Subject: raw means text'],
    );
  }
  fs.writeFileSync(path.join(dir, 'bad.jsonl'), '{"label": "x"}\n');
  assert.throws(() => loadJsonl(path.join(dir, 'bad.jsonl')), /bad.jsonl:1: needs a "raw" or "text" string/);
  fs.writeFileSync(path.join(dir, 'bad1.jsonl'), '{"text": "x"}\n');
  assert.throws(() => loadJsonl(path.join(dir, 'bad1.jsonl')), /bad1.jsonl:1: needs a string "label"/);
  fs.writeFileSync(path.join(dir, 'bad2.jsonl'), '{"label": "x", "text": "y"}\n{oops\n');
  assert.throws(() => loadJsonl(path.join(dir, 'bad2.jsonl')), /bad2.jsonl:2: invalid JSON/);
});

test('mbox: splits at From lines after blank lines, undoes >From quoting', () => {
  const mbox = [
    'From a@x Mon Jan  1 00:00:00 2024',
    'Subject: one',
    '',
    'Hello,',
    'From the start, a body line (no blank line before: not a separator)',
    '>From quoted',
    '',
    'From b@x Mon Jan  1 00:00:01 2024',
    'Subject: two',
    '',
    'body two',
    '',
  ].join('\n');
  const msgs = splitMbox(mbox);
  assert.equal(msgs.length, 2);
  assert.match(msgs[0], /^Subject: one\n\n/);
  assert.match(msgs[0], /\nFrom quoted\n/);
  assert.match(msgs[1], /^Subject: two\n\nbody two/);
  const dir = tmp();
  fs.writeFileSync(path.join(dir, 'spam.mbox'), mbox);
  const ex = loadMbox(path.join(dir, 'spam.mbox'), 'spam');
  assert.deepEqual(
    ex.map((e) => [e.id, e.label]),
    [
      ['spam.mbox#1', 'spam'],
      ['spam.mbox#2', 'spam'],
    ],
  );
});

test('Maildir: one folder per label, cur/ and new/ read, tmp/ and dotfiles skipped; plain folders too', () => {
  const root = tmp();
  for (const [p, body] of [
    ['spam/cur/1:2,S', 'Subject: a\n\nx'],
    ['spam/new/2', 'Subject: b\n\nx'],
    ['spam/tmp/3', 'Subject: partial'],
    ['ham/m1.eml', 'Subject: c\n\nx'],
    ['ham/.hidden', 'nope'],
  ]) {
    fs.mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
    fs.writeFileSync(path.join(root, p), body);
  }
  fs.mkdirSync(path.join(root, '.trash'));
  const ex = loadMaildir(root);
  assert.deepEqual(
    ex.map((e) => [e.label, e.id]),
    [
      ['ham', 'ham/m1.eml'],
      ['spam', 'spam/cur/1:2,S'],
      ['spam', 'spam/new/2'],
    ],
  );
  assert.throws(() => loadMaildir(tmp()), /no label folders/);
});

test('sources: errors name the problem; label order puts spam last', () => {
  assert.throws(() => loadSources({}), /no data/);
  assert.throws(() => loadSources({ corpus: ['nope'] }), /unknown corpus nope/);
  assert.throws(() => loadSources({ mbox: ['noequals'] }), /LABEL=FILE/);
  assert.deepEqual(labelOrder('spam', ['spam', 'ham', 'spam']), ['ham', 'spam']);
  assert.deepEqual(labelOrder('spam', ['junk', 'ok']), ['junk', 'ok']);
  assert.throws(() => labelOrder('spam', ['a', 'b', 'c']), /exactly two labels/);
  assert.deepEqual(labelOrder('topics', ['b', 'a', 'b']), ['a', 'b']);
});

test('hash split is deterministic and close to the requested fraction', () => {
  const ids = Array.from({ length: 4000 }, (_, i) => `m${i}`);
  const share = ids.filter((id) => hashSplit(id, 0.3) === 'test').length / ids.length;
  assert.ok(Math.abs(share - 0.3) < 0.03, String(share));
  assert.equal(hashSplit('m1', 0), 'train');
  assert.equal(hashSplit('m1', 1), 'test');
});

test('random split holds out exactly the fraction, the same for a seed and different for another', () => {
  const split = randomSplit(1000, 0.2, 7);
  assert.equal(split.filter((s) => s === 'test').length, 200);
  assert.deepEqual(randomSplit(1000, 0.2, 7), split);
  const other = randomSplit(1000, 0.2, 8);
  assert.ok(other.some((s, i) => s !== split[i]));
  // Not just a prefix or a stride of the data.
  assert.ok(split.slice(0, 500).includes('test') && split.slice(500).includes('test'));
  assert.deepEqual(randomSplit(3, 0, 1), ['train', 'train', 'train']);
  assert.deepEqual(randomSplit(3, 1, 1), ['test', 'test', 'test']);
});

test('LIBSVM lines round-trip', () => {
  const f = { rows: Uint32Array.from([1, 5, 900]), counts: Uint32Array.from([2, 1, 15]) };
  const line = libsvmLine(3, f);
  assert.equal(line, '3 1:2 5:1 900:15');
  assert.deepEqual(parseLibsvmLine(line), { label: 3, features: f });
  assert.deepEqual(parseLibsvmLine('0'), {
    label: 0,
    features: { rows: new Uint32Array(), counts: new Uint32Array() },
  });
});

test('featurize names each example whose message has an empty body, once', async () => {
  const warnings: [string, string][] = [];
  const examples = [
    { id: 'empty', label: 'x', raw: 'Subject: nothing below\nFrom: a@b\n' },
    { id: 'full', label: 'x', raw: 'Subject: hi\nthe body' },
  ];
  await featurize(examples, makeSpec({ N: 1 << 10 }), false, (id, w) => warnings.push([id, w]));
  assert.deepEqual(warnings, [['empty', 'the message has no text body (nothing but headers or attachments)']]);
});
