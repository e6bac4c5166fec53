// The per-email protocols end to end over a real OT session: results against
// plaintext arithmetic, output handling (client-side decode, provider-side
// label check), message validation, and the selective-failure stance.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { argmaxChoice, decodeArgmaxLabels, evaluateArgmax, evaluateSpam, garbleSpam, spamChoice } from '../ts/gc.js';
import { ProtocolError } from '../ts/ot-wire.js';
import { ensurePool, openSession, randomArgmax } from './gc/session.js';
import { rand, signed } from './gc/reference.js';

const s = await openSession(8192);

function spam(y: number, rPrime: number, T: number, tamper?: (gc: Uint8Array) => void) {
  ensurePool(s, T);
  const { message, pending } = spamChoice(s.client, { rPrime, T });
  const gc = garbleSpam({ y, T }, s.provider, message);
  tamper?.(gc);
  return { result: evaluateSpam(pending, gc), choice: message, gc };
}

test('spam: the client decodes NOT msb(y + r\u2032) correctly at T = 24 and 32, incl. extremes', () => {
  for (const T of [24, 32]) {
    const ex = [0, 1, 2 ** (T - 1) - 1, 2 ** (T - 1), 2 ** T - 1];
    const cases: [number, number][] = [];
    for (const a of ex) for (const b of ex) cases.push([a, b]);
    for (let i = 0; i < 150; i++) cases.push([rand(T), rand(T)]);
    // The real use: y = d + r, r' = -r, so y + r' = d.
    for (const d of [-(2 ** (T - 1)), -1, 0, 1, 2 ** (T - 1) - 1]) {
      const r = rand(T);
      cases.push([(d + r + 2 ** T) % 2 ** T, (2 ** T - r) % 2 ** T]);
    }
    for (const [y, r] of cases) {
      const { result } = spam(y, r, T);
      assert.deepEqual(result, { spam: signed((y + r) % 2 ** T, T) >= 0, invalid: false }, `T=${T} y=${y} r'=${r}`);
    }
  }
});

test("spam: wire sizes are what docs/wire-formats.md documents (T = 32: 1 KB online; the garbler's labels as one 16-byte seed)", () => {
  const T = 32;
  const { choice, gc } = spam(rand(T), rand(T), T);
  assert.equal(choice.length, 11 + 4);
  assert.equal(gc.length, 2 + 1 + 8 + 32 * (T - 1) + 16 + 16);
});

test('spam: a corrupted circuit yields "not spam" exactly like a valid result, flagged locally only', () => {
  const T = 24;
  const tables = 11;
  const labels = tables + 32 * (T - 1);
  let flaggedTables = 0;
  for (let i = 0; i < 60; i++) {
    // y + r' >= 0, so the honest answer is "spam".
    const where = i % 3;
    const { result } = spam(rand(T - 2), 0, T, (gc) => {
      if (where === 0) gc[labels + (i % 16)] ^= 0x40; // the seed of the garbler's input labels
      if (where === 1) gc[gc.length - 1] ^= 0x40; // the digest of "spam"
      if (where === 2) gc.fill(0x5a, tables, labels); // every garbled table
    });
    assert.equal(Object.keys(result).join(), 'spam,invalid');
    if (where < 2) assert.deepEqual(result, { spam: false, invalid: true });
    // A table is read only when the evaluator's permute bit selects it, so a
    // corrupted table either goes unused (correct result) or is caught.
    else if (result.invalid) {
      assert.equal(result.spam, false);
      flaggedTables++;
    } else assert.equal(result.spam, true);
  }
  assert.ok(flaggedTables >= 15, `${flaggedTables}/20 corrupted-table runs flagged`);
});

test('spam: a garbler that swaps the digests cannot make the client see an error', () => {
  const T = 24;
  const { result } = spam(5, 0, T, (gc) => {
    const d = gc.slice(gc.length - 16);
    gc.set(d.subarray(8), gc.length - 16);
    gc.set(d.subarray(0, 8), gc.length - 8);
  });
  // It flips the answer (the garbler can always garble another function, docs/threat-model.md#p5-known-and-documented-limits)
  // but the client's behaviour is a normal "not spam".
  assert.deepEqual(result, { spam: false, invalid: false });
});

const topics = (T: number, n: number, K: number) => randomArgmax(s, T, n, K);

test('topics: the provider decodes S\u2032[argmax] for B\u2032 \u2208 {1, 5, 20, 40}', () => {
  for (const [T, n, K] of [
    [24, 1, 11],
    [24, 5, 11],
    [24, 20, 11],
    [32, 40, 12],
  ]) {
    for (let i = 0; i < 8; i++) {
      const { decoder, labels, expected } = topics(T, n, K);
      assert.equal(decodeArgmaxLabels(decoder, labels), expected, `T=${T} n=${n}`);
    }
  }
});

test('topics: the provider rejects any output label that is not one of its two', () => {
  const { decoder, labels } = topics(24, 5, 11);
  const bad = labels.slice();
  bad[3 + 16 * 4 + 7] ^= 1;
  assert.throws(() => decodeArgmaxLabels(decoder, bad), /not one of the garbler/);
  // A decoder is single use (the zero labels are wiped after decoding).
  assert.throws(() => decodeArgmaxLabels(decoder, labels), /already used/);
  const t2 = topics(24, 5, 11);
  assert.throws(() => decodeArgmaxLabels(t2.decoder, t2.labels.subarray(0, 3 + 16 * 10)), /expected/);
  const t3 = topics(24, 5, 11);
  const random = t3.labels.slice();
  globalThis.crypto.getRandomValues(random.subarray(3));
  assert.throws(() => decodeArgmaxLabels(t3.decoder, random), ProtocolError);
});

test('per-email messages are validated: sizes, shape, padding, OT reuse', () => {
  const T = 24;
  ensurePool(s, 200);
  const { message, pending } = spamChoice(s.client, { rPrime: 1, T });
  assert.throws(() => garbleSpam({ y: 1, T: 30 }, s.provider, message), /shape does not match/);
  assert.throws(() => garbleSpam({ y: 1, T }, s.provider, message.subarray(0, message.length - 1)), /expected/);
  // T = 20 leaves 4 padding bits in the last byte, which must be zero.
  const odd = spamChoice(s.client, { rPrime: 1, T: 20 });
  const badPad = odd.message.slice();
  badPad[badPad.length - 1] |= 0x80;
  assert.throws(() => garbleSpam({ y: 1, T: 20 }, s.provider, badPad), /nonzero padding/);
  assert.throws(() => garbleSpam({ y: 2 ** T, T }, s.provider, message), RangeError);
  assert.deepEqual(evaluateSpam(pending, garbleSpam({ y: 1, T }, s.provider, message)), { spam: true, invalid: false });
  // Replaying a choice message (reusing its OTs) is refused.
  assert.throws(() => garbleSpam({ y: 1, T }, s.provider, message), /already used/);
  assert.deepEqual(evaluateSpam(odd.pending, garbleSpam({ y: 1, T: 20 }, s.provider, odd.message)), {
    spam: true,
    invalid: false,
  });
  assert.throws(() => spamChoice(s.client, { rPrime: -1, T }), RangeError);
  assert.throws(() => argmaxChoice(s.client, { rPrimes: [1], indices: [2048], T, indexBits: 11 }), RangeError);
});

test('after a request the provider rejected, the next one resynchronizes the OT pools', () => {
  const T = 24;
  ensurePool(s, 100);
  const lost = spamChoice(s.client, { rPrime: 7, T });
  assert.throws(() => garbleSpam({ y: 1, T: 25 }, s.provider, lost.message), /shape does not match/);
  lost.pending.dispose();
  const next = spamChoice(s.client, { rPrime: 2 ** T - 3, T });
  const gc = garbleSpam({ y: 2, T }, s.provider, next.message); // skips the lost request's OTs
  assert.deepEqual(evaluateSpam(next.pending, gc), { spam: false, invalid: false }); // 2 - 3 < 0
});

test('client-side gc messages are size-checked before use and their state is single-use', () => {
  const T = 24;
  ensurePool(s, 100);
  const { message, pending } = spamChoice(s.client, { rPrime: 3, T });
  const gc = garbleSpam({ y: 3, T }, s.provider, message);
  assert.throws(() => evaluateSpam(pending, gc.subarray(0, gc.length - 1)), /expected \d+ bytes/);
  const wrongT = gc.slice();
  wrongT[2] = 25;
  assert.throws(() => evaluateSpam(pending, wrongT), /bit width/);
  assert.deepEqual(evaluateSpam(pending, gc), { spam: true, invalid: false });
  assert.throws(() => evaluateSpam(pending, gc), /already used/);
  assert.throws(() => evaluateArgmax(pending, gc), /needs the state from argmaxChoice/);
});

test('errors from malformed input never carry secret values', () => {
  const T = 24;
  const y = 0xabcdef;
  ensurePool(s, 100);
  const delta = Buffer.from(s.provider.delta()).toString('hex');
  const msgs: string[] = [];
  const { message } = spamChoice(s.client, { rPrime: 0x123456, T });
  for (const bad of [message.subarray(0, 5), message.slice().fill(0x11, 2), new Uint8Array(0)]) {
    try {
      garbleSpam({ y, T }, s.provider, bad);
    } catch (e) {
      msgs.push(String((e as Error).message));
    }
  }
  try {
    garbleSpam({ y: 2 ** T + 5, T }, s.provider, message);
  } catch (e) {
    msgs.push(String((e as Error).message));
  }
  assert.equal(msgs.length, 4);
  for (const m of msgs) {
    assert.ok(!m.includes(String(y)) && !m.includes(y.toString(16)) && !m.includes(String(2 ** T + 5)), m);
    assert.ok(!m.includes(delta.slice(0, 8)) && !m.includes(String(0x123456)), m);
  }
});

test('the client choice message is uniformly distributed whatever the input (sender learns nothing)', () => {
  const T = 24;
  const count = (rPrime: number): number[] => {
    const ones = new Array(T).fill(0);
    for (let i = 0; i < 300; i++) {
      ensurePool(s, T);
      const { message, pending } = spamChoice(s.client, { rPrime, T });
      pending.dispose();
      // Keep the provider's pool in step with the client's.
      s.provider.take(s.provider.nextOffset, T);
      for (let b = 0; b < T; b++) ones[b] += (message[11 + (b >> 3)] >> (b & 7)) & 1;
    }
    return ones;
  };
  for (const input of [0, 2 ** T - 1]) {
    for (const c of count(input))
      assert.ok(Math.abs(c - 150) < 5 * Math.sqrt(75), `bit count ${c}/300 for input ${input}`);
  }
});
