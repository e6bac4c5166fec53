import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseMessage } from '../../mail/mime.js';
import { extractFeatures, featuresFromTokens, makeSpec, tokenize, tokenRow, validateSpec } from '../features/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));

/** Independent reference for the public hash (node:crypto instead of @noble). */
function refRow(token: string, N: number): number {
  const d = createHash('sha256').update(`pmf-feature-hash-v1\0${token}`, 'utf8').digest();
  return 1 + (d.readUInt32BE(0) % N);
}

const MULTIPART = [
  'From: "Alice Smith" <alice@example.com>',
  'To: bob@corp.example',
  'Subject: =?UTF-8?B?RnLDvGhsaW5nIHNhbGUh?=',
  'MIME-Version: 1.0',
  'Content-Type: multipart/mixed; boundary=outer',
  '',
  '--outer',
  'Content-Type: multipart/alternative; boundary=b',
  '',
  '--b',
  'Content-Type: text/plain; charset=iso-8859-1',
  'Content-Transfer-Encoding: quoted-printable',
  '',
  "Buy now caf=E9 $100 http://spam.example.org/x don't e-mail buy",
  '--b',
  'Content-Type: text/html; charset=utf-8',
  'Content-Transfer-Encoding: base64',
  '',
  Buffer.from('<p>Vi<!-- x -->agra &amp; <a href="https://evil.test/a">x</a></p>').toString('base64'),
  '--b--',
  '--outer',
  'Content-Type: application/pdf; name=a.pdf',
  'Content-Disposition: attachment; filename=a.pdf',
  'Content-Transfer-Encoding: base64',
  '',
  'JVBERi0xLjQK',
  '--outer--',
  '',
].join('\r\n');

test('tokens: decoded headers, prefixes, charsets, URL hosts, attachment types (hand-checked)', async () => {
  const tokens = tokenize(await parseMessage(MULTIPART));
  assert.deepEqual(tokens, [
    'subject:frühling',
    'subject:sale',
    'from:alice',
    'from:smith',
    'from:alice',
    'from@example.com',
    'to:bob',
    'to@corp.example',
    'mime:text/html',
    'mime:application/pdf',
    'buy',
    'now',
    'café',
    '$100',
    'http',
    'spam',
    'example',
    'org',
    "don't",
    'e-mail',
    'buy',
    'url:spam.example.org',
    'url:evil.test',
  ]);
});

test('HTML-only body: tokens of its text (mail/html.ts)', async () => {
  const raw = 'Subject: hi\nContent-Type: text/html\n\n<style>.x{}</style><b>Cheap</b> <i>meds</i>&nbsp;now';
  const p = await parseMessage(raw);
  assert.deepEqual(tokenize(p), ['subject:hi', 'mime:text/html', 'cheap', 'meds', 'now']);
});

test('token rows equal an independent SHA-256 computation and lie in 1..N', () => {
  for (const N of [1, 7, 1000, 1 << 18, 1 << 24])
    for (const t of ['', 'buy', 'subject:frühling', 'url:evil.test', '$100'])
      assert.equal(tokenRow(t, N), refRow(t, N), `${t} mod ${N}`);
  // Pinned values: a change of hash, domain or encoding breaks every model.
  assert.deepEqual(
    ['buy', 'subject:sale', 'url:evil.test'].map((t) => tokenRow(t, 1 << 18)),
    ['buy', 'subject:sale', 'url:evil.test'].map((t) => refRow(t, 1 << 18)),
  );
});

test('features: counts add up per row, cap at 2^fIn - 1, boolean gives 1, rows sorted', () => {
  const tokens = [...Array(40).fill('buy'), 'now', 'now', 'cheap'];
  const spec = makeSpec({ N: 1 << 20, fIn: 4 });
  const f = featuresFromTokens(tokens, spec);
  const expected = new Map<number, number>();
  for (const t of tokens) expected.set(refRow(t, spec.N), (expected.get(refRow(t, spec.N)) ?? 0) + 1);
  const rows = [...expected.keys()].sort((a, b) => a - b);
  assert.deepEqual([...f.rows], rows);
  assert.deepEqual(
    [...f.counts],
    rows.map((r) => Math.min(expected.get(r)!, 15)),
  );
  const b = featuresFromTokens(tokens, makeSpec({ N: 1 << 20, boolean: true }));
  assert.deepEqual([...b.counts], [1, 1, 1]);
  // Collisions (N = 1) merge into one row whose count is the sum, capped.
  const one = featuresFromTokens(['a1', 'b2', 'c3'], makeSpec({ N: 1, fIn: 1 }));
  assert.deepEqual([...one.rows], [1]);
  assert.deepEqual([...one.counts], [1]);
});

test('lMax caps the distinct rows, keeping those seen first', () => {
  const tokens = Array.from({ length: 500 }, (_, i) => `tok${i}`);
  const spec = makeSpec({ N: 1 << 24, lMax: 100 });
  const f = featuresFromTokens([...tokens, 'tok0', 'tok0'], spec);
  assert.equal(f.rows.length, 100);
  const kept = new Set(tokens.slice(0, 100).map((t) => refRow(t, spec.N)));
  assert.deepEqual(new Set(f.rows), kept);
  assert.equal(f.counts[[...f.rows].indexOf(refRow('tok0', spec.N))], 3);
});

test('malformed input never throws and yields what can be read', async () => {
  const spec = makeSpec({ N: 1 << 16 });
  const bad: (string | Uint8Array)[] = [
    '',
    '\0\0\0',
    new Uint8Array([0xff, 0xfe, 0xfd, 0x80, 0x41, 0x42, 0x43]),
    'Content-Type: multipart/mixed; boundary=x\n\n--x\nContent-Transfer-Encoding: base64\n\n@@@not base64 hello world',
    'Subject: =?UTF-8?B?broken?=\nContent-Type: text/plain; charset=no-such-charset\n\nplain words here',
    'From ' + 'x'.repeat(100),
    `Subject: deep\nContent-Type: multipart/mixed; boundary=a\n\n${'--a\nContent-Type: multipart/mixed; boundary=a\n\n'.repeat(400)}hello`,
    'X'.repeat(3_000_000) + ': y\n\nbody words',
  ];
  for (const raw of bad) {
    const f = await extractFeatures(raw, spec);
    assert.equal(f.rows.length, f.counts.length);
    for (let i = 1; i < f.rows.length; i++) assert.ok(f.rows[i] > f.rows[i - 1]);
  }
  const text = await extractFeatures(bad[4], spec);
  assert.ok(text.rows.includes(refRow('words', spec.N)), 'body of a message with an unknown charset is read');
  const invalidUtf8 = new Uint8Array([
    ...new TextEncoder().encode('Subject: x\n\n'),
    0xff,
    0x80,
    0x20,
    0x68,
    0x69,
    0x21,
  ]);
  const garbage = await extractFeatures(invalidUtf8, spec);
  assert.ok(garbage.rows.includes(refRow('hi', spec.N)), 'words next to invalid UTF-8 are kept');
});

test('strings and bytes of the same message give the same features; mbox envelope ignored', async () => {
  const spec = makeSpec({ N: 1 << 18 });
  const a = await extractFeatures(MULTIPART, spec);
  const b = await extractFeatures(new TextEncoder().encode(MULTIPART), spec);
  const c = await extractFeatures(`From alice@example.com Mon Jan  1 00:00:00 2024\n${MULTIPART}`, spec);
  assert.deepEqual(b, a);
  assert.deepEqual(c, a);
});

test('spec validation rejects what a model header must not carry', () => {
  assert.throws(() => validateSpec({ ...makeSpec(), id: 'other' }), /unknown id/);
  assert.throws(() => validateSpec({ ...makeSpec(), version: 2 }), /version/);
  assert.throws(() => validateSpec({ ...makeSpec(), N: 0 }), /N must be/);
  assert.throws(() => validateSpec({ ...makeSpec(), lMax: 1.5 }), /lMax/);
  assert.throws(() => validateSpec({ ...makeSpec(), fIn: 11 }), /fIn must be an integer in \[1, 10\]/);
  assert.throws(() => validateSpec({ ...makeSpec(), boolean: 'yes' }), /boolean/);
});

test('the extractor uses no Node-only API (it runs in the extension)', () => {
  const dir = path.join(here, '../features');
  for (const f of fs.readdirSync(dir)) {
    const src = fs.readFileSync(path.join(dir, f), 'utf8');
    assert.doesNotMatch(src, /from 'node:|require\(|\bBuffer\b|\bprocess\./, f);
  }
});

// Golden vectors: pinned output for corpus messages and the fixture above.
// Regenerate deliberately with PMF_UPDATE_GOLDEN=1 (a change means every
// deployed model must be retrained).
test('golden vectors', async () => {
  const file = path.join(here, 'golden/features.json');
  const golden = JSON.parse(fs.readFileSync(file, 'utf8')) as {
    spec: ReturnType<typeof makeSpec>;
    cases: { name: string; raw: string; rows: number[]; counts: number[] }[];
  };
  const actual = [];
  for (const c of golden.cases) {
    const f = await extractFeatures(c.raw, golden.spec);
    actual.push({ ...c, rows: [...f.rows], counts: [...f.counts] });
  }
  if (process.env.PMF_UPDATE_GOLDEN === '1') {
    fs.writeFileSync(file, JSON.stringify({ ...golden, cases: actual }, null, 1) + '\n');
    return;
  }
  assert.deepEqual(actual, golden.cases);
});
