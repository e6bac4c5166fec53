// Any sender chooses the bytes the extractor reads, so no message may make it
// throw, hang or return an inadmissible vector: random MIME trees (nested
// multiparts, every transfer encoding, valid, invalid and missing charsets,
// HTML with comments and scripts), huge bodies and deep nesting. The time
// bound is a hang detector (work that grows faster than the input), far
// above what the bench row extract_huge_message measures.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { MAX_MESSAGE_BYTES } from '../../mail/mime.js';
import { countCap, extractFeatures, makeSpec, type FeatureSpec, type Features } from '../features/index.js';

const HANG_MS = 30_000;
const spec = makeSpec({ N: 1 << 16, lMax: 1024 });

function admissible(f: Features, s: FeatureSpec): void {
  assert.equal(f.rows.length, f.counts.length);
  assert.ok(f.rows.length <= s.lMax, `${f.rows.length} rows > lMax`);
  for (let i = 0; i < f.rows.length; i++) {
    assert.ok(f.rows[i] >= 1 && f.rows[i] <= s.N && (i === 0 || f.rows[i] > f.rows[i - 1]), 'rows sorted in 1..N');
    assert.ok(f.counts[i] >= 1 && f.counts[i] <= countCap(s), 'count in 1..cap');
  }
}

async function extractWithin(raw: string | Uint8Array): Promise<Features> {
  const t0 = performance.now();
  const f = await extractFeatures(raw, spec);
  const ms = performance.now() - t0;
  assert.ok(ms < HANG_MS, `extraction took ${ms.toFixed(0)} ms`);
  admissible(f, spec);
  return f;
}

const CHARSETS = ['utf-8', 'iso-8859-1', 'koi8-r', 'windows-1251', 'shift_jis', 'utf-7', 'x-no-such', '"', ''];
const ENCODINGS = ['7bit', '8bit', 'base64', 'quoted-printable', 'x-uuencode', 'binary', '???'];
const TEXT = fc.oneof(
  fc.string({ unit: 'grapheme', maxLength: 200 }),
  fc.string({ unit: 'binary', maxLength: 200 }),
  fc.constantFrom(
    '<html><!-- x --><script>var a="<p>"</script><p>Vi<!-- -->agra &amp; &#x1F600; &#99999999;<a href="http://x.example/">',
    '=?utf-8?B?broken',
    'Привет мир, дешёвые лекарства',
    '我们提供最便宜的药品立即购买',
    'ภาษาไทยเป็นภาษาที่สวยงามมาก',
    '=E9=\r\n=ZZ=3',
    '<',
    '<!--',
    '<script',
  ),
);

interface Leaf {
  type: string;
  charset: string;
  encoding: string;
  body: string;
  repeat: number;
}
type Node = Leaf | { multipart: string; boundary: string; parts: Node[]; epilogue: string };

const leaf: fc.Arbitrary<Leaf> = fc.record({
  type: fc.constantFrom('text/plain', 'text/html', 'application/octet-stream', 'message/rfc822', 'image/png', ''),
  charset: fc.constantFrom(...CHARSETS),
  encoding: fc.constantFrom(...ENCODINGS),
  body: TEXT,
  repeat: fc.oneof(
    { weight: 8, arbitrary: fc.constant(1) },
    { weight: 1, arbitrary: fc.integer({ min: 2, max: 50_000 }) },
  ),
});

const tree = fc.letrec<{ node: Node }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.record({
      multipart: fc.constantFrom('mixed', 'alternative', 'related', 'digest', 'signed'),
      boundary: fc.constantFrom('b', 'b1', 'a', '--', ''),
      parts: fc.array(tie('node'), { maxLength: 4 }),
      epilogue: TEXT,
    }),
  ),
}));

function render(n: Node): string {
  if ('multipart' in n) {
    const inner = n.parts.map((p) => `--${n.boundary}\r\n${render(p)}\r\n`).join('');
    return `Content-Type: multipart/${n.multipart}; boundary="${n.boundary}"\r\n\r\n${inner}--${n.boundary}--\r\n${n.epilogue}`;
  }
  const charset = n.charset ? `; charset=${n.charset}` : '';
  const type = n.type ? `Content-Type: ${n.type}${charset}\r\n` : '';
  const body = n.repeat > 1 ? n.body.repeat(n.repeat) : n.body;
  const encoded = n.encoding === 'base64' ? Buffer.from(body, 'latin1').toString('base64') : body;
  return `${type}Content-Transfer-Encoding: ${n.encoding}\r\n\r\n${encoded}`;
}

const message = fc
  .record({ subject: TEXT, from: TEXT, node: tree.node, bytes: fc.boolean() })
  .map(({ subject, from, node, bytes }) => {
    const text = `From: ${from}\r\nSubject: ${subject}\r\nMIME-Version: 1.0\r\n${render(node)}`;
    return bytes ? Uint8Array.from(Buffer.from(text, 'latin1')) : text;
  });

test('random MIME trees: extraction never throws, stays bounded and admissible', async () => {
  await fc.assert(
    fc.asyncProperty(message, async (raw) => void (await extractWithin(raw))),
    { numRuns: 300, seed: 37 },
  );
});

test('huge and deeply nested messages: bounded, no throw, and the words around them are read', async () => {
  const words = (n: number) => Array.from({ length: n }, (_, i) => `word${i % 5000}`).join(' ');
  const huge = [
    `Subject: one long text\r\n\r\n${words(150_000)}`, // the message that stopped every client before
    `Subject: 20 MB\r\n\r\n${words(2_600_000)}`, // cut at MAX_MESSAGE_BYTES
    `Subject: no spaces\r\n\r\n${'a'.repeat(MAX_MESSAGE_BYTES)}`,
    `Subject: ideographs\r\n\r\n${'我们提供最便宜的药品立即购买'.repeat(300_000)}`,
    `Subject: tags\r\nContent-Type: text/html\r\n\r\n${'<b><!-- <script '.repeat(1_000_000)}`,
    `Subject: deep\r\nContent-Type: multipart/mixed; boundary=a\r\n\r\n${'--a\r\nContent-Type: multipart/mixed; boundary=a\r\n\r\n'.repeat(50_000)}hello`,
    `Subject: headers\r\n${'X-A: b\r\n'.repeat(1_000_000)}\r\nbody`,
  ];
  for (const raw of huge) {
    const f = await extractWithin(raw);
    assert.ok(f.rows.length > 0, `features from ${raw.slice(0, 30)}`);
  }
  const f = await extractWithin(new TextEncoder().encode(huge[0]));
  assert.equal(f.rows.length, 1024, 'a 150,000-word body fills lMax');
});
