import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parseMessage } from '../mime.js';
import { PDF_ATTACHMENT } from './parts.js';

const here = path.dirname(fileURLToPath(import.meta.url));

async function read(raw: string | Uint8Array) {
  const warnings: string[] = [];
  const p = await parseMessage(raw, (w) => warnings.push(w));
  return { subject: p.subject, body: p.body.trim(), warnings };
}

test('a header line then body lines without a blank line: the body is kept', async () => {
  const raw = 'Subject: cheap pills\nBuy now: only today\nhttp://x.example/';
  const want = { subject: 'cheap pills', body: 'Buy now: only today\nhttp://x.example/', warnings: [] };
  assert.deepEqual(await read(raw), want);
  assert.deepEqual(await read(new TextEncoder().encode(raw)), want);
  assert.deepEqual(await read(raw.replace(/\n/g, '\r\n')), want);
  assert.deepEqual(await read(`From a@b Mon Jan  1 2024\n${raw}`), want);
});

test('text without headers is all body; a real message is read as before', async () => {
  assert.deepEqual(await read('Note this: it has a colon\nSubject: not a header'), {
    subject: '',
    body: 'Note this: it has a colon\nSubject: not a header',
    warnings: [],
  });
  assert.deepEqual(await read('Subject: s\n\nbody'), { subject: 's', body: 'body', warnings: [] });
});

test('an empty body is reported once, through the warning callback', async () => {
  for (const raw of ['Subject: only headers\nFrom: a@b\n', '', 'Subject: x\n\n  \n'])
    assert.deepEqual((await read(raw)).warnings, ['the message has no text body (nothing but headers or attachments)']);
});

test('attachments are listed with their size and SHA-256', async () => {
  const raw = [
    'Content-Type: multipart/mixed; boundary=b',
    '',
    '--b',
    'Content-Type: text/plain',
    '',
    'see attached',
    ...PDF_ATTACHMENT,
  ].join('\n');
  const p = await parseMessage(raw);
  // sha256sum of the decoded bytes "%PDF-1.4\n"
  const sha256 = 'e5c62df5dab5c87b6a015ef3d43597074d1eec433b15f51aec63b8582d0e4ab4';
  assert.deepEqual(p.attachments, [{ filename: 'a.pdf', mimeType: 'application/pdf', size: 9, sha256 }]);
  assert.deepEqual(p.mimeTypes, ['application/pdf']);
});

test('mail/ uses no Node-only API (it runs in the extension and its workers)', () => {
  const dir = path.join(here, '..');
  for (const f of fs.readdirSync(dir).filter((f) => f.endsWith('.ts'))) {
    const src = fs.readFileSync(path.join(dir, f), 'utf8');
    assert.doesNotMatch(src, /from 'node:|require\(|\bBuffer\b|\bprocess\./, f);
  }
});
