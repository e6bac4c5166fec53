import assert from 'node:assert/strict';
import { test } from 'node:test';
import { missingSeparator, splitHeaders } from '../headers.js';
import { messageIdOf, providerIdOf } from '../message-id.js';

test('the body starts after the blank line, or at the first line that is no header', () => {
  assert.deepEqual(splitHeaders('From: a@b\nSubject: x\n\nbody'), {
    head: 'From: a@b\nSubject: x',
    bodyStart: 22,
    separated: true,
  });
  // The bug this pins: "Subject:" then body lines without a blank line.
  assert.deepEqual(splitHeaders('Subject: hi\nthe body\nmore'), {
    head: 'Subject: hi',
    bodyStart: 12,
    separated: false,
  });
  assert.deepEqual(splitHeaders('Subject: a\n folded\nbody: a header'), {
    head: 'Subject: a\n folded\nbody: a header',
    bodyStart: 33,
    separated: false,
  });
  assert.deepEqual(splitHeaders('Hello there\nFrom: x'), { head: '', bodyStart: 0, separated: false });
  assert.deepEqual(splitHeaders(' indented first line'), { head: '', bodyStart: 0, separated: false });
  assert.deepEqual(splitHeaders('From x@y Mon Jan  1 2024\r\nSubject: s\r\n\r\nb'), {
    head: 'From x@y Mon Jan  1 2024\r\nSubject: s',
    bodyStart: 40,
    separated: true,
  });
});

test('a blank line goes where the body starts, unless one is there', () => {
  assert.deepEqual(missingSeparator('Subject: hi\nthe body'), { at: 12, newline: '\n' });
  assert.deepEqual(missingSeparator('Subject: hi\r\nthe body'), { at: 13, newline: '\r\n' });
  assert.deepEqual(missingSeparator('Note this: it has a colon'), { at: 0, newline: '\n' });
  assert.equal(missingSeparator('From: a@b\n\nx'), undefined);
  assert.equal(missingSeparator('Subject: headers only\n'), undefined);
  assert.equal(missingSeparator(''), undefined);
});

test('message ids: Message-ID without brackets, folded or not, from the header block only', () => {
  assert.equal(messageIdOf('Subject: x\nMessage-ID: <a@b>\n\nbody', 'f'), 'a@b');
  assert.equal(messageIdOf('Subject: x\nMessage-Id:\n <folded@b>\n\nbody', 'f'), 'folded@b');
  assert.equal(messageIdOf('Subject: x\n\nbody', 'fallback'), 'fallback');
  assert.equal(messageIdOf('Subject: x\n\nMessage-ID: <in-body@b>', 'fallback'), 'fallback');
  assert.equal(messageIdOf('Subject: x\nbody line\nMessage-ID: <in-body@b>', 'fallback'), 'fallback');
});

test('message ids: the provider-assigned X-PMF-Message-Id comes first, the first copy of it, if well-formed', () => {
  const assigned = 'pmf-0123456789abcdef0123456789abcdef';
  const other = 'pmf-ffffffffffffffffffffffffffffffff';
  const raw = `X-PMF-Message-Id: ${assigned}\nMessage-ID: <reused@b>\nx-pmf-message-id: ${other}\n\nbody`;
  assert.equal(messageIdOf(raw, 'f'), assigned);
  assert.equal(messageIdOf(`Message-ID: <a@b>\nX-PMF-Message-Id:\n ${assigned}\n\nbody`, 'f'), assigned);
  // Not the stage's format (mail that never went through it): the Message-ID as before.
  assert.equal(messageIdOf('X-PMF-Message-Id: chosen-by-sender\nMessage-ID: <a@b>\n\nbody', 'f'), 'a@b');
  assert.equal(messageIdOf(`Subject: x\n\nX-PMF-Message-Id: ${assigned}`, 'fallback'), 'fallback');
});

test('message ids: providerIdOf takes only the assigned id, never a Message-ID that looks like one', () => {
  const assigned = 'pmf-0123456789abcdef0123456789abcdef';
  assert.equal(providerIdOf(`X-PMF-Message-Id: ${assigned}\nMessage-ID: <a@b>\n\nbody`), assigned);
  assert.equal(providerIdOf(`Message-ID: <${assigned}>\n\nbody`), undefined);
  assert.equal(providerIdOf('X-PMF-Message-Id: chosen-by-sender\n\nbody'), undefined);
  assert.equal(providerIdOf(`Subject: x\n\nX-PMF-Message-Id: ${assigned}`), undefined);
});

test('plain text whose first line only looks like a header is all body; one real message field makes a header block', () => {
  // Before: read as a header "Note" and the text was lost.
  assert.deepEqual(splitHeaders('Note: Buy cheap pills now'), { head: '', bodyStart: 0, separated: false });
  assert.deepEqual(splitHeaders('Note: buy\nPS: cheap\n\nmore'), { head: '', bodyStart: 0, separated: false });
  assert.deepEqual(missingSeparator('Note: Buy cheap pills now'), { at: 0, newline: '\n' });
  assert.deepEqual(splitHeaders('Note: buy\nSubject: hi\n\nmore'), {
    head: 'Note: buy\nSubject: hi',
    bodyStart: 23,
    separated: true,
  });
  assert.equal(splitHeaders('X-Anything: 1\n\nb').separated, true, 'any X- field');
  assert.equal(messageIdOf('Note: x\nMessage-Id: <m@b>\n\nbody', 'f'), 'm@b');
});
