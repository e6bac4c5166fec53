// A malicious client against the real provider (crypto workers, store, the
// default spam model): the two key-recovery attacks of docs/security.md.
//   1. Nonce averaging: repeat one hello nonce to average p0's error away and
//      learn p1·s. The provider answers the same nonce with the same p0.
//   2. Chosen-ciphertext decryption oracle: send a' = 2^(Q−2)·e_k with a chosen
//      blinding and read one bit of the decryption key per verdict. The
//      provider decrypts only under a per-user key s_u that rotates after a
//      small budget, so the bits are of s_u (independent of the model key s)
//      and stop at the budget.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import type { Message } from '../../protocol/messages.js';
import { evaluateSpam, spamChoice } from '../../wasm/ts/gc.js';
import { HE_LWE_N, loadHe, type He, type ProviderKey } from '../../wasm/ts/he.js';
import { OtReceiver } from '../../wasm/ts/ot.js';
import { TestClient } from './harness.js';
import { startRealProvider, type RealProvider } from './real-provider.js';
import { packLwe } from '../../wasm/test/he/lwe-layout.js';

const BUDGET = 24;
let provider: RealProvider;
let he: He;
let token: string;
let userId: number;

before(async () => {
  provider = await startRealProvider({
    overrides: { limits: { userKeyBudget: BUDGET, hellosPerMinute: 200, requestsPerMinute: 10_000 } },
  });
  ({ token, userId } = await provider.store.addUser('mallory'));
  for (let i = 0; i < 3 * BUDGET; i++)
    await provider.store.deliver(userId, `self-${i}`, `Subject: ${i}\r\n\r\nto myself`);
  he = await loadHe();
});
after(() => provider.close());

const served = () => provider.catalog.current('spam')!;
const welcome = (m: Message): Extract<Message, { name: 'welcome' }> => {
  assert.ok(m.name === 'welcome', JSON.stringify(m));
  return m;
};

test('repeating a hello nonce returns the identical p0: averaging removes nothing', async () => {
  const nonce = he.randomSeed();
  const p0s: Uint8Array[] = [];
  for (let i = 0; i < 40; i++) {
    const c = await TestClient.connect(provider.server.wsUrl);
    const w = welcome(
      await c.request('hello', 1, { token, modelId: 'spam', modelVersion: 1, clientNonce: nonce, keyEpoch: 1 }),
    );
    p0s.push(w.p0);
    c.close();
  }
  // The attack averages the p0s coefficient-wise: with identical answers the
  // average is one sample, its error e intact (≈ 3.3 bits per coefficient).
  for (const p0 of p0s) assert.deepEqual(p0, p0s[0]);
});

/** a' = 2^(Q−2)·e_k (2^(Q−3) in the a-part's Q − 1 bits), b' = 0: its phase is 2^(Q−2)·s_k, so y = s_k·2^(T−2) mod 2^T. */
function probe(k: number, Q: number): Uint8Array {
  const a = new Array<bigint>(HE_LWE_N).fill(0n);
  a[k] = 1n << BigInt(Q - 3);
  return packLwe(0n, a, Q);
}

/** What the key's coefficient k is, read with the provider's own decryption of the probe. */
const coefficient = (key: ProviderKey, k: number, Q: number): number => {
  const phase = key.forContext(served().params).lwePhase(probe(k, Q));
  return phase === 0n ? 0 : phase === 1n << BigInt(Q - 2) ? 1 : -1;
};

/** The attacker's session: hello, base OTs, an extension batch. */
async function attacker(keyEpoch: number) {
  const c = await TestClient.connect(provider.server.wsUrl);
  const w = welcome(
    await c.request('hello', 1, { token, modelId: 'spam', modelVersion: 1, clientNonce: he.randomSeed(), keyEpoch }),
  );
  const receiver = new OtReceiver(he.core, new TextEncoder().encode(w.sessionId));
  const b = await c.request('ot', 2, { payload: receiver.start() });
  assert.ok(b.name === 'ot_reply');
  receiver.finish(b.payload);
  assert.equal((await c.request('ot', 3, { payload: receiver.extend(64 * served().params.T) })).name, 'ot_reply');
  return { c, w, receiver, next: 10 };
}

/** One verdict on a probe with r' = 0: "not spam" iff msb(y) = 1 iff s_k = −1. */
async function ask(a: Awaited<ReturnType<typeof attacker>>, messageId: string, k: number): Promise<Message | boolean> {
  const { T, Q } = served().params;
  const { message: choices, pending } = spamChoice(a.receiver, { rPrime: 0, T });
  const reply = await a.c.request('spam_request', a.next++, { messageId, lwe: probe(k, Q), choices });
  if (reply.name !== 'spam_gc') {
    pending.dispose();
    return reply;
  }
  a.c.send('spam_done', a.next++, { messageId });
  return !evaluateSpam(pending, reply.gc).spam;
}

test('the chosen-ciphertext oracle reads bits of a rotating user key, never of the model key', async () => {
  const { Q } = served().params;
  const bytes = new Uint8Array(fs.readFileSync(served().keyFile));
  const modelKey = he.loadSecretKey(bytes);
  bytes.fill(0);
  const seed = Buffer.from(served().providerSeed, 'hex');

  const a = await attacker(0);
  assert.equal(a.w.keyEpoch, 1);
  assert.equal(a.w.keyBudget, BUDGET);
  const { salt } = (await provider.store.userKey(userId, 'spam', served().version))!;
  const userKey = modelKey.userKey(seed, { salt, epoch: 1 });
  let agreeWithModelKey = 0;
  for (let k = 0; k < BUDGET; k++) {
    const minusOne = await ask(a, `self-${k}`, k);
    assert.equal(typeof minusOne, 'boolean', JSON.stringify(minusOne));
    // The oracle answers about s_u ...
    assert.equal(minusOne, coefficient(userKey, k, Q) === -1, `coefficient ${k}`);
    // ... which is independent of s: agreement is at chance level (5/9 expected).
    if (minusOne === (coefficient(modelKey, k, Q) === -1)) agreeWithModelKey++;
  }
  assert.ok(agreeWithModelKey < BUDGET, 'the bits are not those of the model key');

  // The budget is spent: the epoch's key answers no more.
  const refused = await ask(a, `self-${BUDGET}`, BUDGET);
  assert.ok(typeof refused !== 'boolean' && refused.name === 'error' && refused.code === 'key_rotated');
  assert.equal(
    await provider.store.isClassified(userId, `self-${BUDGET}`),
    false,
    'the refused message can still be classified',
  );

  // The next session brings epoch 2: a fresh, independent key and a new KSK.
  const b = await attacker(1);
  assert.equal(b.w.keyEpoch, 2);
  assert.ok(b.w.ksk.length > 0);
  const next = modelKey.userKey(seed, { salt, epoch: 2 });
  let same = 0;
  for (let k = 0; k < HE_LWE_N; k += 16) if (coefficient(next, k, Q) === coefficient(userKey, k, Q)) same++;
  assert.ok(
    same < 0.5 * (HE_LWE_N / 16),
    `${same} of ${HE_LWE_N / 16} sampled coefficients equal: keys are independent`,
  );
  for (const key of [modelKey, userKey, next]) key.dispose();
  a.c.close();
  b.c.close();
});

test('the key-switching key is deterministic per (user, epoch): asking again averages nothing', async () => {
  const first = await attacker(0);
  const second = await attacker(0);
  assert.ok(first.w.ksk.length > 0);
  assert.deepEqual(first.w.ksk, second.w.ksk);
  first.c.close();
  second.c.close();
});

test('a re-sent request with other OT choices gets no second garbling: only the recorded bytes, for the same request', async () => {
  const { T, Q } = served().params;
  const key = async () => (await provider.store.userKey(userId, 'spam', served().version))!;
  const id = `self-${2 * BUDGET}`;
  const a = await attacker((await key()).epoch);
  const lwe = probe(1, Q);
  const first = spamChoice(a.receiver, { rPrime: 0, T });
  const answer = await a.c.request('spam_request', a.next++, { messageId: id, lwe, choices: first.message });
  assert.ok(answer.name === 'spam_gc', JSON.stringify(answer));
  a.c.close(); // "lost": no spam_done
  const used = (await key()).used;

  // A new session: other choice bits for the same ciphertext (the labels of the
  // other input, i.e. the second label of some wires) are refused, resent or new.
  const b = await attacker((await key()).epoch);
  const other = spamChoice(b.receiver, { rPrime: 1, T });
  for (const name of ['spam_resend', 'spam_request'] as const) {
    const r = await b.c.request(name, b.next++, { messageId: id, lwe, choices: other.message });
    assert.ok(r.name === 'error' && r.code === 'already_classified', `${name}: ${JSON.stringify(r)}`);
  }
  other.pending.dispose();
  // The same request gets the same bytes, decodable only with the first session's labels.
  const again = await b.c.request('spam_resend', b.next++, { messageId: id, lwe, choices: first.message });
  assert.ok(again.name === 'spam_gc');
  assert.deepEqual(again.gc, answer.gc, 'no new garbling');
  assert.equal((await key()).used, used, 'no second decryption');
  assert.equal(evaluateSpam(first.pending, again.gc).invalid, false);
  b.c.close();
});
