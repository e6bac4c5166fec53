import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProtocolError } from '../errors.js';
import { encodeFrame, FRAME_HEADER_BYTES } from '../frame.js';
import { LIMITS } from '../limits.js';
import { decodeMessage, encodeMessage, SCHEMAS } from '../messages.js';

const nonce = new Uint8Array(32).map((_, i) => i);

function code(fn: () => unknown): string {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof ProtocolError, `expected ProtocolError, got ${e}`);
    return e.code;
  }
  assert.fail('expected a ProtocolError');
}

test('every message round-trips through encode/decode', () => {
  const samples = {
    hello: { token: 'tok', modelId: 'spam', modelVersion: 3, clientNonce: nonce, keyEpoch: 0 },
    welcome: {
      sessionId: 's1',
      modelVersion: 3,
      packageSha256: nonce,
      candidatesSha256: new Uint8Array(0),
      p0: new Uint8Array(100).fill(7),
      keyEpoch: 2,
      ksk: new Uint8Array(0),
      keyBudget: 256,
      maxFrameBytes: 1 << 20,
      requestsPerMinute: 60,
    },
    ot: { payload: new Uint8Array([1, 2, 3]) },
    ot_reply: { payload: new Uint8Array(0) },
    spam_request: { messageId: 'm-1', lwe: new Uint8Array(500).fill(9), choices: new Uint8Array([0xff, 0x01, 0x02]) },
    spam_gc: { messageId: 'm-1', gc: new Uint8Array(700).fill(3) },
    spam_done: { messageId: 'm-1' },
    error: { code: 'bad_field', message: 'x is wrong — ü' },
    ping: { nonce: 0xdeadbeef },
    pong: { nonce: 1 },
    bye: {},
    topic_request: { messageId: 'm-2', lwes: new Uint8Array(900).fill(4), choices: new Uint8Array(90).fill(1) },
    topic_gc: { messageId: 'm-2', gc: new Uint8Array(2000).fill(5) },
    topic_labels: { messageId: 'm-2', labels: new Uint8Array(83).fill(6) },
    topic_ack: { messageId: 'm-2' },
    topic_setting: { optOut: 1 },
    topic_setting_ack: { optOut: 0 },
    spam_resend: { messageId: 'm-1', lwe: new Uint8Array(500).fill(9), choices: new Uint8Array([0xff, 0x01, 0x02]) },
    blocklist_request: { messageId: 'm-3', listId: 'phishing', listVersion: 4, blinded: new Uint8Array(1024).fill(8) },
    blocklist_reply: { messageId: 'm-3', evaluated: new Uint8Array(1024).fill(9) },
    topic_resend: { messageId: 'm-4', lwes: new Uint8Array(700).fill(4), choices: new Uint8Array([0x0c, 0x01]) },
  } as const;
  assert.deepEqual(Object.keys(samples).sort(), Object.keys(SCHEMAS).sort());
  for (const [name, fields] of Object.entries(samples)) {
    const bytes = encodeMessage(name as keyof typeof samples, 4242, fields as never);
    const msg = decodeMessage(bytes);
    assert.equal(msg.name, name);
    assert.equal(msg.requestId, 4242);
    for (const [k, v] of Object.entries(fields))
      assert.deepEqual((msg as Record<string, unknown>)[k], v, `${name}.${k}`);
  }
});

test('encodeMessage writes the documented bytes: header, then each field big-endian and length-prefixed', () => {
  // docs/wire-formats.md, by hand: version 1, type, request id, body length;
  // str = u16 length + UTF-8, bytes = u32 length + bytes, u32 as is.
  const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
  const request = encodeMessage('spam_request', 0x01020304, {
    messageId: 'mü',
    lwe: new Uint8Array([0xaa, 0xbb]),
    choices: new Uint8Array([0x07]),
  });
  const type = SCHEMAS.spam_request.type.toString(16).padStart(2, '0');
  assert.equal(hex(request), `01${type}01020304` + '00000010' + '0003' + '6dc3bc' + '00000002aabb' + '0000000107');
  const blocklist = encodeMessage('blocklist_request', 7, {
    messageId: '',
    listId: 'p',
    listVersion: 0x0a0b0c0d,
    blinded: new Uint8Array(1024).fill(1),
  });
  const bt = SCHEMAS.blocklist_request.type.toString(16).padStart(2, '0');
  assert.equal(
    hex(blocklist),
    `01${bt}00000007` + '0000040d' + '0000' + '000170' + '0a0b0c0d' + '00000400' + '01'.repeat(1024),
  );
});

test('frames that are too short, mis-sized, of another version or type are rejected by name', () => {
  const good = encodeMessage('ping', 1, { nonce: 5 });
  assert.equal(
    code(() => decodeMessage(good.subarray(0, 5))),
    'malformed_frame',
  );
  assert.equal(
    code(() => decodeMessage(good.subarray(0, good.length - 1))),
    'malformed_frame',
  );
  const v2 = good.slice();
  v2[0] = 2;
  assert.equal(
    code(() => decodeMessage(v2)),
    'unsupported_version',
  );
  const t = good.slice();
  t[1] = 200;
  assert.equal(
    code(() => decodeMessage(t)),
    'unknown_type',
  );
  assert.equal(
    code(() => decodeMessage(new Uint8Array(2048), 1024)),
    'frame_too_large',
  );
  // trailing bytes after the last field
  assert.equal(
    code(() => decodeMessage(encodeFrame(SCHEMAS.ping.type, 1, new Uint8Array(5)))),
    'malformed_frame',
  );
});

test('a declared field length beyond the schema bound is refused before slicing', () => {
  // spam_request whose lwe claims 2^32-1 bytes: must fail on the bound, not on memory
  const body = new Uint8Array(2 + 1 + 4);
  body.set([0, 1, 0x41, 0xff, 0xff, 0xff, 0xff]);
  assert.equal(
    code(() => decodeMessage(encodeFrame(SCHEMAS.spam_request.type, 9, body))),
    'bad_field',
  );
  // within the bound but longer than the frame
  const body2 = new Uint8Array([0, 1, 0x41, 0, 0, 1, 0]);
  assert.equal(
    code(() => decodeMessage(encodeFrame(SCHEMAS.spam_request.type, 9, body2))),
    'malformed_frame',
  );
  // fixed-size nonce of the wrong length
  assert.throws(
    () =>
      encodeMessage('hello', 1, {
        token: 't',
        modelId: 'm',
        modelVersion: 1,
        clientNonce: new Uint8Array(31),
        keyEpoch: 0,
      }),
    RangeError,
  );
  assert.ok(LIMITS.lwe < LIMITS.ot);
});

test('strings must be valid UTF-8 without control characters and within bounds', () => {
  const mk = (s: Uint8Array): Uint8Array => {
    const body = new Uint8Array(2 + s.length);
    body.set([s.length >> 8, s.length & 0xff]);
    body.set(s, 2);
    return encodeFrame(SCHEMAS.spam_done.type, 1, body);
  };
  assert.equal(
    code(() => decodeMessage(mk(new Uint8Array([0xc3, 0x28])))),
    'bad_field',
  );
  assert.equal(
    code(() => decodeMessage(mk(new TextEncoder().encode('a\nb')))),
    'bad_field',
  );
  assert.equal(
    code(() => decodeMessage(mk(new Uint8Array(LIMITS.id + 1).fill(0x41)))),
    'bad_field',
  );
  assert.equal(decodeMessage(mk(new TextEncoder().encode('<abc@x.org>'))).name, 'spam_done');
});

test('the header is exactly 10 bytes and the request id is big-endian', () => {
  const f = encodeMessage('bye', 0x01020304, {});
  assert.equal(f.length, FRAME_HEADER_BYTES);
  assert.deepEqual([...f], [1, SCHEMAS.bye.type, 1, 2, 3, 4, 0, 0, 0, 0]);
});
