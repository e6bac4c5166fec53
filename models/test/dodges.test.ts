// Message shapes that used to hide their words from the model: each test's
// words must reach the features (tokens and, for one, the rows the
// private protocol sees).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import iconv from 'iconv-lite';
import { parseMessage } from '../../mail/mime.js';
import { extractFeatures, makeSpec, tokenize, tokenRow } from '../features/index.js';
import { jsonLines } from '../data/loaders.js';

const tokensOf = async (raw: string | Uint8Array) => tokenize(await parseMessage(raw));

test('multipart/alternative with a stub text part: the HTML part’s words reach the features', async () => {
  const raw = [
    'From: deals@shop.example',
    'Subject: offer',
    'MIME-Version: 1.0',
    'Content-Type: multipart/alternative; boundary=alt',
    '',
    '--alt',
    'Content-Type: text/plain; charset=us-ascii',
    '',
    'This message is in HTML format. Please use an HTML capable mail program to read it.',
    '--alt',
    'Content-Type: text/html; charset=utf-8',
    '',
    '<html><body><h1>Replica watches</h1><p>Cheap viagra and casino bonus, unsubscribe never.',
    'Limited offer for replica handbags, rolex, pharmacy without prescription: click now.</p>',
    '<a href="http://spam.example/buy">buy</a></body></html>',
    '--alt--',
    '',
  ].join('\r\n');
  const tokens = await tokensOf(raw);
  for (const w of ['replica', 'viagra', 'casino', 'pharmacy', 'prescription'])
    assert.ok(tokens.includes(w), `${w} in ${tokens.join(' ')}`);
  const spec = makeSpec({ N: 1 << 16 });
  const f = await extractFeatures(raw, spec);
  assert.ok(f.rows.includes(tokenRow('viagra', spec.N)), 'and in the rows the provider’s model sees');
});

test('an ordinary alternative keeps its text part (the HTML says about the same)', async () => {
  const raw = [
    'Content-Type: multipart/alternative; boundary=alt',
    '',
    '--alt',
    'Content-Type: text/plain',
    '',
    'Lunch at noon tomorrow? The usual place.',
    '--alt',
    'Content-Type: text/html',
    '',
    '<p>Lunch at <b>noon</b> tomorrow? The usual place. <i>sent from phone</i></p>',
    '--alt--',
  ].join('\r\n');
  const tokens = await tokensOf(raw);
  assert.ok(!tokens.includes('phone'), tokens.join(' '));
  assert.ok(tokens.includes('lunch'));
});

test('a plain-text record starting with a header-like line keeps its text', async () => {
  const record = JSON.stringify({ label: 'spam', text: 'Note: Buy cheap pills now, limited offer' });
  const file = `${process.env.TMPDIR ?? '/tmp'}/pmf-dodge-${process.pid}.jsonl`;
  (await import('node:fs')).writeFileSync(file, record);
  const [{ rec }] = [...jsonLines(file)];
  const tokens = await tokensOf(rec.text as string);
  for (const w of ['note', 'buy', 'cheap', 'pills', 'offer']) assert.ok(tokens.includes(w), `${w} in ${tokens}`);
});

test('unlabeled 8-bit Cyrillic (KOI8-R, windows-1251) is read in its charset', async () => {
  const text = 'Здравствуйте! Мы предлагаем дешёвые лекарства без рецепта. Купите сейчас со скидкой.';
  for (const charset of ['koi8-r', 'windows-1251']) {
    const bytes = new Uint8Array([
      ...Buffer.from('From: a@b.example\r\nSubject: hi\r\n\r\n', 'latin1'),
      ...iconv.encode(text, charset),
    ]);
    const tokens = await tokensOf(bytes);
    for (const w of ['лекарства', 'рецепта', 'скидкой']) assert.ok(tokens.includes(w), `${charset}: ${tokens}`);
    const plain = await tokensOf(iconv.encode(text, charset)); // a headerless record, as bytes
    assert.ok(plain.includes('лекарства'), `${charset} without headers: ${plain}`);
  }
  // A sender's label is never overridden, and UTF-8 needs no guess.
  const labelled = new Uint8Array([
    ...Buffer.from('Content-Type: text/plain; charset=iso-8859-1\r\n\r\n', 'latin1'),
    ...iconv.encode('caf\u00e9 cr\u00e8me', 'latin1'),
  ]);
  assert.deepEqual(await tokensOf(labelled), ['café', 'crème']);
  assert.ok((await tokensOf(new TextEncoder().encode('Subject: x\r\n\r\nдешёвые лекарства'))).includes('лекарства'));
});

test('Chinese, Japanese and Thai are split into words, not dropped or cut at combining marks', async () => {
  const zh = await tokensOf(
    'Subject: x\r\n\r\n我们提供最便宜的药品，立即购买优惠价格，我们提供最便宜的药品立即购买优惠价格',
  );
  for (const w of ['药品', '购买', '价格']) assert.ok(zh.includes(w), `${w} in ${zh}`);
  const ja = await tokensOf('Subject: x\r\n\r\n今すぐ購入してください。格安の医薬品をお届けします');
  for (const w of ['購入', '医薬品']) assert.ok(ja.includes(w), `${w} in ${ja}`);
  const th = await tokensOf('Subject: x\r\n\r\nซื้อยาราคาถูกที่นี่ ภาษาไทยเป็นภาษาที่สวยงามมาก');
  for (const w of ['ซื้อ', 'ราคา', 'ถูก', 'ที่']) assert.ok(th.includes(w), `${w} in ${th}`);
  const hi = await tokensOf('Subject: x\r\n\r\nसस्ती दवाइयाँ खरीदें');
  assert.ok(hi.includes('दवाइयाँ'), `Devanagari keeps its vowel signs: ${hi}`);
});
