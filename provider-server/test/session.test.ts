// Bad-input and security-property tests of the session protocol
// (docs/threat-model.md#p3-at-most-once, docs/threat-model.md#p4-security-against-deviating-parties, docs/protocol.md#errors, docs/protocol.md#at-most-once-classification): one test per kind of bad frame, and after each the
// server still serves a second, well-behaved session.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { SETUP_OT_FRAMES } from '../../protocol/limits.js';
import { encodeFrame, PROTOCOL_VERSION } from '../../protocol/frame.js';
import { SCHEMAS, type Message } from '../../protocol/messages.js';
import { NONCE, startHarness, TestClient, type Harness } from './harness.js';

let h: Harness;
let token: string;
let userId: number;
let otherToken: string;

before(async () => {
  h = await startHarness({ maxFrameBytes: 8192, requestsPerMinute: 100 });
  ({ token, userId } = await h.store.addUser('alice'));
  otherToken = (await h.store.addUser('bob')).token;
  for (let i = 0; i < 20; i++) await h.store.deliver(userId, `m${i}`, `Subject: ${i}\r\n\r\nbody`);
});
after(() => h.close());

function expectError(m: Message, code: string, requestId?: number): void {
  assert.equal(m.name, 'error', `expected error ${code}, got ${m.name}`);
  if (m.name !== 'error') return;
  assert.equal(m.code, code, m.message);
  assert.ok(m.message.length > 0);
  if (requestId !== undefined) assert.equal(m.requestId, requestId);
}

async function hello(c: TestClient, t = token, version = 2): Promise<Message> {
  return c.request('hello', 1, { token: t, modelId: 'spam', modelVersion: version, clientNonce: NONCE, keyEpoch: 0 });
}

/** Proves the server still serves: a fresh session does hello + ping. */
async function serverStillServes(): Promise<void> {
  const c = await TestClient.connect(h.server.wsUrl);
  assert.equal((await hello(c)).name, 'welcome');
  const pong = await c.request('ping', 77, { nonce: 5 });
  assert.deepEqual([pong.name, pong.requestId], ['pong', 77]);
  c.close();
}

test('hello gets a welcome with p0 for this nonce, the package hash and limits', async () => {
  const c = await TestClient.connect(h.server.wsUrl);
  const w = await hello(c);
  assert.equal(w.name, 'welcome');
  if (w.name !== 'welcome') return;
  assert.equal(w.modelVersion, 2);
  assert.equal(Buffer.from(w.packageSha256).toString('hex'), h.model.packageSha256);
  assert.equal(w.p0.length, 32);
  assert.equal(w.maxFrameBytes, 8192);
  c.close();
});

test('malformed frames get malformed_frame and the session continues', async () => {
  const c = await TestClient.connect(h.server.wsUrl);
  c.sendRaw(new Uint8Array([1, 2, 3]));
  expectError(await c.next(), 'malformed_frame');
  const lying = encodeFrame(SCHEMAS.ping.type, 9, new Uint8Array(4));
  lying[9] = 8; // declares 8 body bytes, carries 4
  c.sendRaw(lying);
  expectError(await c.next(), 'malformed_frame', 9);
  c.sendRaw('{"hello":1}');
  expectError(await c.next(), 'malformed_frame');
  const v = encodeFrame(SCHEMAS.ping.type, 3, new Uint8Array(4));
  v[0] = PROTOCOL_VERSION + 1;
  c.sendRaw(v);
  expectError(await c.next(), 'unsupported_version', 3);
  c.sendRaw(encodeFrame(250, 4, new Uint8Array(0)));
  expectError(await c.next(), 'unknown_type', 4);
  // a field whose declared length exceeds its bound
  c.sendRaw(encodeFrame(SCHEMAS.hello.type, 5, new Uint8Array([0xff, 0xff, 0, 0])));
  expectError(await c.next(), 'bad_field', 5);
  assert.equal((await hello(c)).name, 'welcome', 'the same session still works');
  c.close();
  await serverStillServes();
});

test('oversized frames get frame_too_large', async () => {
  const c = await TestClient.connect(h.server.wsUrl);
  c.sendRaw(encodeFrame(SCHEMAS.ot.type, 6, new Uint8Array(9000)));
  expectError(await c.next(), 'frame_too_large', 6);
  assert.equal((await c.request('ping', 7, { nonce: 1 })).name, 'pong');
  c.close();
  await serverStillServes();
});

test('unauthenticated frames are refused: requests before hello, and a bad token', async () => {
  const c = await TestClient.connect(h.server.wsUrl);
  expectError(
    await c.request('spam_request', 2, { messageId: 'm0', lwe: new Uint8Array(10), choices: new Uint8Array(3) }),
    'unauthenticated',
    2,
  );
  expectError(await c.request('ot', 3, { payload: new Uint8Array(3) }), 'unauthenticated', 3);
  expectError(await hello(c, 'not-a-token'), 'unauthenticated');
  assert.equal((await c.waitClosed()).code, 1008, 'a bad token closes the session');
  assert.equal(await h.store.isClassified(userId, 'm0'), false);
  await serverStillServes();
});

test('out-of-order frames get out_of_order', async () => {
  const c = await TestClient.connect(h.server.wsUrl);
  await hello(c);
  expectError(await hello(c), 'out_of_order');
  expectError(await c.request('spam_done', 4, { messageId: 'm1' }), 'out_of_order', 4);
  expectError(
    await c.request('welcome', 5, {
      sessionId: 'x',
      modelVersion: 1,
      packageSha256: NONCE,
      candidatesSha256: NONCE,
      p0: NONCE,
      keyEpoch: 1,
      ksk: NONCE,
      keyBudget: 1,
      maxFrameBytes: 1,
      requestsPerMinute: 1,
    }),
    'out_of_order',
  );
  const gc = await c.request('spam_request', 6, {
    messageId: 'm1',
    lwe: new Uint8Array(10),
    choices: new Uint8Array(3),
  });
  assert.equal(gc.name, 'spam_gc');
  expectError(
    await c.request('spam_request', 7, { messageId: 'm2', lwe: new Uint8Array(10), choices: new Uint8Array(3) }),
    'out_of_order',
    7,
  );
  assert.equal(await h.store.isClassified(userId, 'm2'), false, 'a refused request claims nothing');
  c.send('spam_done', 8, { messageId: 'm1' }); // no reply: spam_done carries nothing back
  assert.equal((await c.request('ping', 9, { nonce: 0 })).name, 'pong');
  expectError(await c.request('spam_done', 10, { messageId: 'm1' }), 'out_of_order', 10);
  c.close();
  await serverStillServes();
});

test('a message id is classified at most once per user; unknown and foreign ids are refused', async () => {
  const c = await TestClient.connect(h.server.wsUrl);
  await hello(c);
  const req = (id: string, rid: number) =>
    c.request('spam_request', rid, { messageId: id, lwe: new Uint8Array(10), choices: new Uint8Array(3) });
  const first = await req('m3', 10);
  assert.equal(first.name, 'spam_gc');
  c.send('spam_done', 11, { messageId: 'm3' });
  expectError(await req('m3', 12), 'already_classified', 12);
  expectError(await req('never-delivered', 13), 'unknown_message', 13);
  c.close();
  // Bob cannot classify Alice's message, even knowing its id.
  const b = await TestClient.connect(h.server.wsUrl);
  await hello(b, otherToken);
  expectError(
    await b.request('spam_request', 1, { messageId: 'm4', lwe: new Uint8Array(10), choices: new Uint8Array(3) }),
    'unknown_message',
  );
  assert.equal(await h.store.isClassified(userId, 'm4'), false);
  b.close();
  // and a new session of Alice's cannot replay m3 either
  const c2 = await TestClient.connect(h.server.wsUrl);
  await hello(c2);
  expectError(
    await c2.request('spam_request', 1, { messageId: 'm3', lwe: new Uint8Array(10), choices: new Uint8Array(3) }),
    'already_classified',
  );
  c2.close();
});

test('a crypto failure releases the claim and leaks no detail to the client', async () => {
  const c = await TestClient.connect(h.server.wsUrl);
  await hello(c);
  h.crypto.failNext = new Error('secret-key-bytes-0123456789abcdef');
  const e = await c.request('spam_request', 1, {
    messageId: 'm5',
    lwe: new Uint8Array(10),
    choices: new Uint8Array(3),
  });
  expectError(e, 'internal');
  assert.ok(e.name === 'error' && !e.message.includes('secret-key'));
  assert.equal(await h.store.isClassified(userId, 'm5'), false, 'nothing left the provider: claim released');
  // A validation failure from the crypto layer names the problem (its messages are secret-free).
  h.crypto.failNext = Object.assign(new Error('LWE ciphertext must be 22540 bytes'), { code: 'bad_field' });
  expectError(
    await c.request('spam_request', 2, { messageId: 'm5', lwe: new Uint8Array(10), choices: new Uint8Array(3) }),
    'bad_field',
  );
  assert.equal(
    (await c.request('spam_request', 3, { messageId: 'm5', lwe: new Uint8Array(10), choices: new Uint8Array(3) })).name,
    'spam_gc',
  );
  c.close();
});

test('an outdated model version is told to update; unknown models are refused', async () => {
  const c = await TestClient.connect(h.server.wsUrl);
  const e = await hello(c, token, 1);
  expectError(e, 'model_outdated');
  assert.match(e.name === 'error' ? e.message : '', /download version 2/);
  const d = await TestClient.connect(h.server.wsUrl);
  expectError(
    await d.request('hello', 1, { token, modelId: 'topics', modelVersion: 1, clientNonce: NONCE, keyEpoch: 0 }),
    'unknown_model',
  );
});

test('the per-user rate limit refuses requests beyond the window budget', async () => {
  const hh = await startHarness({ requestsPerMinute: 2 });
  try {
    const u = await hh.store.addUser('carol');
    for (const id of ['a', 'b', 'c']) await hh.store.deliver(u.userId, id, 'x');
    const c = await TestClient.connect(hh.server.wsUrl);
    await c.request('hello', 1, { token: u.token, modelId: 'spam', modelVersion: 2, clientNonce: NONCE, keyEpoch: 0 });
    for (const id of ['a', 'b']) {
      assert.equal(
        (await c.request('spam_request', 2, { messageId: id, lwe: new Uint8Array(4), choices: new Uint8Array(1) }))
          .name,
        'spam_gc',
      );
      c.send('spam_done', 3, { messageId: id });
    }
    expectError(
      await c.request('spam_request', 4, { messageId: 'c', lwe: new Uint8Array(4), choices: new Uint8Array(1) }),
      'rate_limited',
      4,
    );
    assert.equal(await hh.store.isClassified(u.userId, 'c'), false);
    // The session's setup frames were paid for by its hello; the one after them is refused.
    for (let i = 0; i < SETUP_OT_FRAMES; i++)
      assert.equal((await c.request('ot', 5, { payload: new Uint8Array(8) })).name, 'ot_reply');
    expectError(await c.request('ot', 5, { payload: new Uint8Array(8) }), 'rate_limited', 5);
    c.close();
  } finally {
    await hh.close();
  }
});

test('session crypto state is dropped when the socket closes', async () => {
  const c = await TestClient.connect(h.server.wsUrl);
  const w = await hello(c);
  c.close();
  const start = Date.now();
  while (!h.crypto.ended.includes(w.name === 'welcome' ? w.sessionId : '') && Date.now() - start < 3000)
    await new Promise((r) => setTimeout(r, 10));
  assert.ok(w.name === 'welcome' && h.crypto.ended.includes(w.sessionId));
});

test('bye closes the session normally', async () => {
  const c = await TestClient.connect(h.server.wsUrl);
  await hello(c);
  c.send('bye', 1, {});
  assert.equal((await c.waitClosed()).code, 1000);
});

test('beyond maxSessions new connections are refused (503) while open sessions keep working; idle sessions are closed', async () => {
  const hh = await startHarness({ maxSessions: 1, idleTimeoutMs: 1000 });
  try {
    const { token } = await hh.store.addUser('only-one');
    const first = await TestClient.connect(hh.server.wsUrl);
    const fields = { token, modelId: 'spam', modelVersion: 2, clientNonce: NONCE, keyEpoch: 0 };
    assert.equal((await first.request('hello', 9, fields)).name, 'welcome');
    await assert.rejects(TestClient.connect(hh.server.wsUrl), /503/);
    assert.equal((await first.request('ping', 1, { nonce: 3 })).name, 'pong');
    assert.equal((await first.waitClosed(3000)).code, 1001, 'closed after the idle timeout');
    const next = await TestClient.connect(hh.server.wsUrl);
    assert.equal((await next.request('ping', 2, { nonce: 4 })).name, 'pong', 'the slot is free again');
    next.close();
  } finally {
    await hh.close();
  }
});

test('exactly once: a reconnected client re-sends its request and gets the recorded answer, byte for byte, once', async () => {
  const request = { messageId: 'm10', lwe: new Uint8Array(10).fill(1), choices: new Uint8Array(3).fill(2) };
  const c = await TestClient.connect(h.server.wsUrl);
  await hello(c);
  const first = await c.request('spam_request', 2, request);
  assert.equal(first.name, 'spam_gc');
  c.close(); // the answer "was lost": no spam_done
  const used = (await h.store.userKey(userId, 'spam', 2))!.used;

  const c2 = await TestClient.connect(h.server.wsUrl);
  await hello(c2);
  // another request for the message (other OT choices, or another ciphertext) is refused
  for (const other of [
    { ...request, choices: new Uint8Array(3).fill(3) },
    { ...request, lwe: new Uint8Array(10).fill(4) },
  ]) {
    expectError(await c2.request('spam_resend', 3, other), 'already_classified', 3);
    expectError(await c2.request('spam_request', 4, other), 'already_classified', 4);
  }
  const again = await c2.request('spam_resend', 5, request);
  assert.equal(again.name, 'spam_gc');
  assert.ok(first.name === 'spam_gc' && again.name === 'spam_gc');
  assert.deepEqual(again.gc, first.gc, 'the recorded garbling, not a new one');
  assert.equal((await h.store.userKey(userId, 'spam', 2))!.used, used, 'no second decryption');
  // one email at a time: the resend is answered like a request, spam_done closes it
  expectError(await c2.request('spam_resend', 6, request), 'out_of_order', 6);
  c2.send('spam_done', 7, { messageId: 'm10' });
  expectError(await c2.request('spam_resend', 8, request), 'already_classified', 8);
  c2.close();

  // Bob sending Alice's exact request gets nothing of hers (the id is not his message)
  const b = await TestClient.connect(h.server.wsUrl);
  await hello(b, otherToken);
  expectError(await b.request('spam_resend', 2, request), 'unknown_message', 2);
  b.close();
});

test('a client that never acknowledges leaves at most unacknowledgedAnswersPerUser answers in the store', async () => {
  const small = await startHarness({ unacknowledgedAnswersPerUser: 3 });
  try {
    const user = await small.store.addUser('forgetful');
    const requests = Array.from({ length: 6 }, (_, i) => ({
      messageId: `f${i}`,
      lwe: new Uint8Array(10).fill(i),
      choices: new Uint8Array(3),
    }));
    for (const r of requests) await small.store.deliver(user.userId, r.messageId, 'Subject: f\r\n\r\nbody');
    // One answer per session at most stays open: the attacker's pattern is a session per message.
    const once = async (name: 'spam_request' | 'spam_resend', r: (typeof requests)[number]): Promise<Message> => {
      const c = await TestClient.connect(small.server.wsUrl);
      try {
        await hello(c, user.token);
        return await c.request(name, 2, r);
      } finally {
        c.close(); // never spam_done
      }
    };
    for (const r of requests) {
      assert.equal((await once('spam_request', r)).name, 'spam_gc');
      await new Promise((resolve) => setTimeout(resolve, 2)); // distinct claim times
    }
    const resent = [];
    for (const r of requests) {
      const m = await once('spam_resend', r);
      resent.push(m.name === 'error' ? m.code : m.name);
    }
    assert.deepEqual(resent, [...Array(3).fill('already_classified'), ...Array(3).fill('spam_gc')]);
  } finally {
    await small.close();
  }
});

test("a session caps its user's unacknowledged answers with its first answer only; sessions left open hold one each", async () => {
  const keep = 3;
  const small = await startHarness({ unacknowledgedAnswersPerUser: keep });
  try {
    const user = await small.store.addUser('steady');
    const request = (i: number) => ({
      messageId: `s${i}`,
      lwe: new Uint8Array(10).fill(i),
      choices: new Uint8Array(3),
    });
    for (let i = 0; i < 14; i++) await small.store.deliver(user.userId, `s${i}`, 'Subject: s\r\n\r\nbody');
    const caps: (number | undefined)[] = [];
    const record = small.store.recordAnswer;
    Object.assign(small.store, {
      recordAnswer: (...a: Parameters<typeof record>) => (caps.push(a[5]), record(...a)),
    });
    const unacknowledged = async () =>
      (await small.store.sql().all('SELECT 1 FROM classified WHERE user_id = ? AND answer IS NOT NULL', [user.userId]))
        .length;
    // An honest session: each answer acknowledged before the next request; only the first caps.
    const c = await TestClient.connect(small.server.wsUrl);
    await hello(c, user.token);
    for (let i = 0; i < 3; i++) {
      assert.equal((await c.request('spam_request', 2 + 2 * i, request(i))).name, 'spam_gc');
      c.send('spam_done', 3 + 2 * i, { messageId: `s${i}` });
    }
    assert.equal((await c.request('ping', 20, { nonce: 1 })).name, 'pong');
    c.close();
    assert.deepEqual(caps, [keep, undefined, undefined]);
    // Five sessions open at once, each leaving its second answer unacknowledged: one each beyond the cap.
    const open = await Promise.all(Array.from({ length: 5 }, () => TestClient.connect(small.server.wsUrl)));
    for (const [k, o] of open.entries()) {
      await hello(o, user.token);
      assert.equal((await o.request('spam_request', 2, request(3 + 2 * k))).name, 'spam_gc');
      o.send('spam_done', 3, { messageId: `s${3 + 2 * k}` });
    }
    for (const [k, o] of open.entries()) {
      assert.equal((await o.request('spam_request', 4, request(4 + 2 * k))).name, 'spam_gc');
      await new Promise((resolve) => setTimeout(resolve, 2)); // distinct claim times: the cap keeps ties
    }
    for (const o of open) o.close();
    assert.equal(await unacknowledged(), 5, 'the cap ran before these five answers');
    // The next session's first answer caps them again.
    const next = await TestClient.connect(small.server.wsUrl);
    await hello(next, user.token);
    assert.equal((await next.request('spam_request', 2, request(13))).name, 'spam_gc');
    next.close();
    assert.equal(await unacknowledged(), keep);
  } finally {
    await small.close();
  }
});

test('exactly once: a request whose answer never left is not_answered; a new request then takes the claim over', async () => {
  const c = await TestClient.connect(h.server.wsUrl);
  await hello(c);
  const request = { messageId: 'm11', lwe: new Uint8Array(10), choices: new Uint8Array(3) };
  expectError(await c.request('spam_resend', 2, request), 'not_answered', 2);
  // a provider crash between claim and record leaves an unanswered claim
  await h.store.claim(userId, 'm11', 'spam', Buffer.alloc(32, 9));
  expectError(await c.request('spam_resend', 3, request), 'not_answered', 3);
  assert.equal((await c.request('ping', 4, { nonce: 1 })).name, 'pong', 'a resync answer keeps the session');
  const fresh = await c.request('spam_request', 5, { ...request, choices: new Uint8Array(3).fill(7) });
  assert.equal(fresh.name, 'spam_gc');
  c.send('spam_done', 6, { messageId: 'm11' });
  expectError(await c.request('spam_request', 7, request), 'already_classified', 7);
  c.close();
});
