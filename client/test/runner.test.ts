// The runner's patience with a provider that asks it to slow down: a
// rate_limited hello is waited out (the provider counts whole minutes) well
// past the short window for a provider that is down, and then given up.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProtocolError } from '../../protocol/errors.js';
import { runClassification, type Classifier, type RunOutcome } from '../core/runner.js';
import type { SpamVerdict } from '../core/session.js';

const item = { id: 'm1', raw: async () => 'Subject: hi\r\n\r\nhello\r\n' };

/** Refuses the first `refusals` hellos with rate_limited, then classifies everything as ham. */
function provider(refusals: number) {
  const tries: number[] = [];
  const connect = async (): Promise<Classifier<SpamVerdict>> => {
    tries.push(Date.now());
    if (tries.length <= refusals) throw new ProtocolError('rate_limited', 'at most 2 sessions per minute');
    return { classify: async (messageId) => ({ messageId, spam: false }) as SpamVerdict, close: () => {} };
  };
  return { tries, connect };
}

test('a rate-limited hello is tried again past the reconnect window, and the message is classified', async () => {
  const p = provider(3);
  const outcomes: RunOutcome[] = [];
  const slowed: string[] = [];
  await runClassification([item], {
    connect: p.connect,
    onOutcome: (o) => void outcomes.push(o),
    onReconnect: (_, e) => slowed.push((e as ProtocolError).code),
    reconnectWindowMs: 10,
    rateLimitWaitMs: 400,
  });
  assert.deepEqual(
    outcomes.map((o) => o.kind),
    ['verdict'],
  );
  assert.deepEqual(slowed, ['rate_limited', 'rate_limited', 'rate_limited']);
  assert.ok(p.tries[1] - p.tries[0] > 10, 'the second try came after the reconnect window');
});

test('a provider that keeps refusing is given up after rateLimitWaitMs, with few tries', async () => {
  const p = provider(Infinity);
  const started = Date.now();
  await assert.rejects(
    runClassification([item], { connect: p.connect, onOutcome: () => {}, reconnectWindowMs: 10, rateLimitWaitMs: 300 }),
    (e: unknown) => e instanceof ProtocolError && e.code === 'rate_limited',
  );
  const last = p.tries[p.tries.length - 1] - started;
  assert.ok(last >= 300, `the last try came ${last} ms after the first refusal`);
  assert.ok(p.tries.length <= 5, `${p.tries.length} tries`);
});

test('keepOpen leaves the last session open for the caller only when the run completed', async () => {
  let closed = 0;
  const session = (fail: boolean): Classifier<SpamVerdict> => ({
    classify: async (messageId) => {
      if (fail) throw new ProtocolError('bad_field', 'refused');
      return { messageId, spam: false } as SpamVerdict;
    },
    close: () => void closed++,
  });
  await runClassification([item], { connect: async () => session(false), onOutcome: () => {}, keepOpen: true });
  assert.equal(closed, 0, 'left open');
  await assert.rejects(
    runClassification([item], { connect: async () => session(true), onOutcome: () => {}, keepOpen: true }),
  );
  assert.equal(closed, 1, 'a failed run closes its session');
});
