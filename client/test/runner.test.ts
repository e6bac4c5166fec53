// The runner's patience with a provider that asks it to slow down: a
// rate_limited hello is waited out (the provider counts whole minutes) well
// past the short window for a provider that is down, and then given up; and
// what a run does with the requests an earlier one kept on the device.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ProtocolError } from '../../protocol/errors.js';
import { MessageFailure } from '../core/message-failure.js';
import { MESSAGE_ATTEMPTS, runClassification, type Classifier, type RunOutcome } from '../core/runner.js';
import type { RunJournal } from '../core/kept-requests.js';
import { ConnectionClosed, InterruptedRequest } from '../core/interrupted-request.js';
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

test('kept requests: resumed first, forgotten once stored (also a stale one of a settled message), kept through a provider that stays down', async () => {
  const kept = new Set(['m1', 'settled']);
  const log: string[] = [];
  const journal: RunJournal = {
    resume: async (id) =>
      kept.has(id)
        ? new InterruptedRequest(
            new ConnectionClosed(),
            { messageId: id, lwe: new Uint8Array(1), choices: new Uint8Array(1) },
            undefined,
          )
        : undefined,
    forget: async (id) => void (kept.delete(id), log.push(`forget ${id}`)),
  };
  const session: Classifier<SpamVerdict> = {
    classify: async (messageId) => (log.push(`classify ${messageId}`), { messageId, spam: false }) as SpamVerdict,
    resume: async (i) =>
      (log.push(`resume ${i.request.messageId}`), { messageId: i.request.messageId, spam: true }) as SpamVerdict,
    close: () => {},
  };
  await runClassification([item, { ...item, id: 'settled' }, { ...item, id: 'm2' }], {
    done: new Set(['settled']),
    connect: async () => session,
    journal,
    onOutcome: (o) => void log.push(`outcome ${o.messageId}`),
  });
  assert.deepEqual(log, [
    'forget settled',
    'resume m1',
    'outcome m1',
    'forget m1',
    'classify m2',
    'outcome m2',
    'forget m2',
  ]);

  kept.add('m1');
  await assert.rejects(
    runClassification([item], {
      connect: async () => Promise.reject(new ConnectionClosed('down')),
      journal,
      onOutcome: () => {},
      reconnectWindowMs: 10,
    }),
    ConnectionClosed,
  );
  assert.ok(kept.has('m1'), 'a run that gave up keeps the request for the next one');
});

test('a message whose content cannot be read is tried again once, reported failed with its reason, and never blocks the next', async () => {
  const tries = new Map<string, number>();
  let sessions = 0;
  const connect = async (): Promise<Classifier<SpamVerdict>> => {
    sessions++;
    return {
      classify: async (messageId) => {
        tries.set(messageId, (tries.get(messageId) ?? 0) + 1);
        // What one huge message did to the extractor before it was bounded (session.ts wraps the extraction).
        if (messageId === 'huge') throw new MessageFailure(new RangeError('Maximum call stack size exceeded'));
        return { messageId, spam: false } as SpamVerdict;
      },
      close: () => {},
    };
  };
  const outcomes: RunOutcome[] = [];
  const items = ['before', 'huge', 'after'].map((id) => ({ ...item, id }));
  await runClassification(items, { connect, onOutcome: (o) => void outcomes.push(o) });
  assert.deepEqual(
    outcomes.map((o) => `${o.kind} ${o.messageId}`),
    ['verdict before', 'failed huge', 'verdict after'],
  );
  const failed = outcomes[1];
  assert.ok(
    failed.kind === 'failed' && /Maximum call stack size exceeded/.test(failed.detail),
    'the reason is recorded',
  );
  assert.equal(tries.get('huge'), MESSAGE_ATTEMPTS, 'tried a bounded number of times');
  assert.equal(sessions, 1, 'nothing was sent for it: the session goes on');
});

test('a failure to record an outcome stops the run: it is not the message’s, and the message is not asked about twice', async () => {
  let asked = 0;
  const connect = async (): Promise<Classifier<SpamVerdict>> => ({
    classify: async (messageId) => (asked++, { messageId, spam: false }) as SpamVerdict,
    close: () => {},
  });
  const full = new Error('QuotaExceededError');
  await assert.rejects(
    runClassification([item], {
      connect,
      onOutcome: () => {
        throw full;
      },
    }),
    (e) => e === full,
  );
  assert.equal(asked, 1);
});
