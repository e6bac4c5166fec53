// The session protocol with the real crypto workers: docs/threat-model.md#p4-security-against-deviating-parties checks that need
// the OT and lattice layers (a cheating OT receiver is cut off, malformed
// ciphertexts are refused by name, requests out of protocol order are refused)
// and docs/threat-model.md#non-negotiable-properties hygiene (the secret key never appears in logs, progress or errors).
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import { heLayout, loadHe, type He } from '../../wasm/ts/he.js';
import { helloSession, TestClient } from './harness.js';
import { startRealProvider, type RealProvider } from './real-provider.js';
import type { Message } from '../../protocol/messages.js';

let provider: RealProvider;
let he: He;
let token: string;
const logs: string[] = [];
const errors: Message[] = [];

before(async () => {
  provider = await startRealProvider({
    overrides: { workers: 2 },
    log: (l) => logs.push(l),
    progress: (d, t, l) => logs.push(`${l} ${d}/${t}`),
  });
  const u = await provider.store.addUser('alice');
  token = u.token;
  for (const id of ['m1', 'm2', 'm3']) await provider.store.deliver(u.userId, id, `Subject: ${id}\r\n\r\nhello`);
  he = await loadHe();
});
after(() => provider.close());

/** A connected client; its OT receiver binds to the session id of the welcome unless told another. */
const session = (otContext?: string) =>
  helloSession(provider.server.wsUrl, he, { token, modelId: 'spam', modelVersion: 1 }, { otContext });

function record(m: Message): Message {
  if (m.name === 'error') errors.push(m);
  return m;
}

test('welcome carries a fresh p0 per client nonce that the client validates', async () => {
  const seed = Buffer.from(provider.catalog.current('spam')!.providerSeed, 'hex');
  const p0s: Uint8Array[] = [];
  for (let i = 0; i < 2; i++) {
    const c = await TestClient.connect(provider.server.wsUrl);
    const nonce = he.randomSeed();
    const w = await c.request('hello', 1, { token, modelId: 'spam', modelVersion: 1, clientNonce: nonce, keyEpoch: 0 });
    assert.ok(w.name === 'welcome');
    he.loadPublicKey(w.p0, seed, nonce).dispose(); // sizes and ranges check out
    p0s.push(w.p0);
    c.close();
  }
  assert.notDeepEqual(p0s[0], p0s[1]);
  assert.throws(() => he.loadPublicKey(new Uint8Array(p0s[0].length).fill(0xff), seed, he.randomSeed()), /public key/);
  assert.throws(() => he.loadPublicKey(p0s[0].subarray(1), seed, he.randomSeed()), /public key/);
});

test('spam_request before OT setup is out_of_order and claims nothing', async () => {
  const { c } = await session();
  const e = record(
    await c.request('spam_request', 2, { messageId: 'm1', lwe: new Uint8Array(100), choices: new Uint8Array(15) }),
  );
  assert.ok(e.name === 'error' && e.code === 'out_of_order', JSON.stringify(e));
  assert.equal(await provider.store.isClassified((await provider.store.userId('alice'))!, 'm1'), false);
  c.close();
});

test('a malformed LWE ciphertext or choice message is refused by name; the claim is released', async () => {
  const { c, receiver } = await session();
  const b = await c.request('ot', 2, { payload: receiver.start() });
  assert.equal(b.name, 'ot_reply');
  receiver.finish(b.name === 'ot_reply' ? b.payload : new Uint8Array());
  assert.equal((await c.request('ot', 3, { payload: receiver.extend(100) })).name, 'ot_reply');
  const bad = record(
    await c.request('spam_request', 4, { messageId: 'm2', lwe: new Uint8Array(1000), choices: new Uint8Array(15) }),
  );
  assert.ok(
    bad.name === 'error' && bad.code === 'bad_field' && /LWE|ciphertext/i.test(bad.message),
    JSON.stringify(bad),
  );
  const uid = (await provider.store.userId('alice'))!;
  assert.equal(await provider.store.isClassified(uid, 'm2'), false, 'claim released: nothing left the provider');
  const { lweBytes } = heLayout(provider.catalog.current('spam')!.params);
  const badChoice = record(
    await c.request('spam_request', 5, {
      messageId: 'm2',
      lwe: new Uint8Array(lweBytes),
      choices: new Uint8Array([0x10, 1, 9]),
    }),
  );
  assert.ok(badChoice.name === 'error' && badChoice.code === 'bad_field', JSON.stringify(badChoice));
  assert.equal(await provider.store.isClassified(uid, 'm2'), false);
  c.close();
});

test('a cheating OT receiver (tampered extension matrix) is rejected and its session closed; others continue', async () => {
  const { c, receiver } = await session();
  const b = await c.request('ot', 2, { payload: receiver.start() });
  receiver.finish(b.name === 'ot_reply' ? b.payload : new Uint8Array());
  const ext = receiver.extend(100);
  ext[20] ^= 0x01; // flip one bit of the u matrix
  const e = record(await c.request('ot', 3, { payload: ext }));
  assert.ok(e.name === 'error' && e.code === 'crypto_rejected', JSON.stringify(e));
  assert.equal((await c.waitClosed()).code, 1008);
  const other = await session();
  assert.equal((await other.c.request('ping', 9, { nonce: 1 })).name, 'pong');
  other.c.close();
});

test('an OT extension bound to another session id fails the KOS check and closes the session', async () => {
  const { c, receiver } = await session('another-session-id');
  const b = await c.request('ot', 2, { payload: receiver.start() });
  receiver.finish(b.name === 'ot_reply' ? b.payload : new Uint8Array());
  const e = record(await c.request('ot', 3, { payload: receiver.extend(100) }));
  assert.ok(e.name === 'error' && e.code === 'crypto_rejected', JSON.stringify(e));
  assert.equal((await c.waitClosed()).code, 1008);
});

test('random garbage frames each get one error frame; the server keeps serving', async () => {
  let seed = 12345;
  const rnd = (n: number): number => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return seed % n;
  };
  // Sessions close after 16 bad frames, so send 10 per session.
  for (let round = 0; round < 15; round++) {
    const { c } = await session();
    for (let i = 0; i < 10; i++) {
      // Valid header, random type (bye excluded: it ends the session) and random body.
      const body = Uint8Array.from({ length: rnd(64) }, () => rnd(256));
      const frame = new Uint8Array(10 + body.length);
      frame.set([1, [1, 2, 3, 5, 7, 9, 200][rnd(7)], 0, 0, 0, i, 0, 0, 0, body.length]);
      frame.set(body, 10);
      c.sendRaw(frame);
      const m = await c.next();
      if (m.name === 'error') errors.push(m);
      assert.ok(m.name === 'error' || m.name === 'pong', `round ${round} frame ${i}: unexpected ${m.name}`);
      assert.equal(m.requestId, i);
    }
    c.close();
  }
  const fresh = await session();
  assert.equal((await fresh.c.request('ping', 1, { nonce: 2 })).name, 'pong');
  fresh.c.close();
});

test('the secret key never appears in logs, progress output, error frames or metrics', async () => {
  const keyFile = provider.catalog.current('spam')!.keyFile;
  assert.equal(fs.statSync(keyFile).mode & 0o777, 0o600);
  const key = fs.readFileSync(keyFile);
  const metrics = await (await fetch(`${provider.server.httpUrl}/metrics`)).text();
  const haystack = [...logs, ...errors.map((e) => (e.name === 'error' ? e.message : '')), metrics].join('\n');
  for (const enc of ['hex', 'base64'] as const) {
    for (let off = 0; off + 16 <= key.length; off += 256) {
      assert.ok(!haystack.includes(key.subarray(off, off + 16).toString(enc)), `key bytes (${enc}) found in output`);
    }
  }
  assert.ok(errors.length >= 3, 'the error frames of the tests above were inspected');
});
