// Longer randomized runs of the GC/OT protocols (npm run test:slow).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeArgmaxLabels, evaluateSpam, garbleSpam, spamChoice } from '../ts/gc.js';
import { OtReceiver, OtSender } from '../ts/ot.js';
import { SESSION_ID, ensurePool, openSession, randomArgmax } from './gc/session.js';
import { rand, signed } from './gc/reference.js';

const s = await openSession(65280);

test('spam: 300 random comparisons at every T from 2 to 32', () => {
  for (let T = 2; T <= 32; T++) {
    for (let i = 0; i < 300; i++) {
      const y = rand(T);
      const r = rand(T);
      ensurePool(s, T);
      const { message, pending } = spamChoice(s.client, { rPrime: r, T });
      const res = evaluateSpam(pending, garbleSpam({ y, T }, s.provider, message));
      assert.deepEqual(res, { spam: signed((y + r) % 2 ** T, T) >= 0, invalid: false }, `T=${T} y=${y} r=${r}`);
    }
  }
});

test('topics: 300 random argmax runs over random shapes', () => {
  for (let i = 0; i < 300; i++) {
    const T = i % 2 ? 26 + Math.floor(Math.random() * 7) : 2 + Math.floor(Math.random() * 5); // 2..6 or 26..32
    const n = 1 + rand(6);
    const K = 1 + rand(4);
    const { decoder, labels, expected } = randomArgmax(s, T, n, K);
    assert.equal(decodeArgmaxLabels(decoder, labels), expected);
  }
});

test('KOS: a receiver deviating in column i passes exactly when bit i of Δ is 0', () => {
  class Cheat extends OtReceiver {
    col = 0;
    protected override deviate(u: Uint8Array, stride: number): void {
      u[this.col * stride] ^= 1;
    }
  }
  for (let trial = 0; trial < 24; trial++) {
    const client = new Cheat(s.core, SESSION_ID);
    const provider = new OtSender(s.core, SESSION_ID);
    client.finish(provider.respond(client.start()));
    client.col = rand(7);
    const bit = (provider.delta()[client.col >> 3] >> (client.col & 7)) & 1;
    const msg = client.extend(512);
    if (bit) assert.throws(() => provider.acceptExtension(msg), /consistency check failed/);
    else assert.ok(provider.acceptExtension(msg) > 0);
  }
});
