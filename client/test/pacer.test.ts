// The client's pacing of the frames a provider counts: never more than the
// limit in any window the provider could count them in, and no wait below it.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FRAMES_PER_MESSAGE } from '../../protocol/limits.js';
import { onPacedWait, pacerFor, RatePacer, sharePace, WINDOW_MS } from '../core/pacer.js';

/** A pacer on a fake clock: sleeping advances it. */
function fakePacer(perMinute: number): { pacer: RatePacer; clock: { t: number } } {
  const clock = { t: 1_000_000 };
  const pacer = new RatePacer(
    perMinute,
    () => clock.t,
    async (ms) => {
      await Promise.resolve();
      clock.t += ms;
    },
  );
  return { pacer, clock };
}

test('at most perMinute counted frames in any window, and the first perMinute go at once', async () => {
  const { pacer, clock } = fakePacer(5);
  const times: number[] = [];
  for (let i = 0; i < 23; i++) {
    await pacer.take();
    times.push(clock.t);
    clock.t += i % 3; // some work between frames
  }
  assert.deepEqual(times.slice(0, 5), [1_000_000, 1_000_000, 1_000_001, 1_000_003, 1_000_003]);
  for (let i = 5; i < times.length; i++) {
    // the (i-5)th frame has left the window exactly when frame i goes: no later, no earlier
    assert.equal(times[i], Math.max(times[i - 5] + WINDOW_MS, times[i - 1] + ((i - 1) % 3)), `frame ${i}`);
  }
  for (let i = 0; i < times.length; i++) {
    const inWindow = times.filter((t) => t >= times[i] && t < times[i] + WINDOW_MS).length;
    assert.ok(inWindow <= 5, `${inWindow} frames in the window from frame ${i}`);
  }
});

test("a message's first FRAMES_PER_MESSAGE frames count once, as the provider counts them; more count each", async () => {
  const { pacer, clock } = fakePacer(3);
  const start = clock.t;
  for (const id of ['a', 'b', 'c']) for (let i = 0; i < 3; i++) await pacer.take(id); // spam, link check, topics
  assert.equal(clock.t, start, 'three messages of three frames each fit a limit of three');
  await pacer.take('d');
  assert.equal(clock.t, start + WINDOW_MS, 'the fourth message waits for the window');
  const { pacer: p2, clock: c2 } = fakePacer(2);
  for (let i = 0; i < FRAMES_PER_MESSAGE; i++) await p2.take('a');
  assert.equal(c2.t, 1_000_000);
  await p2.take('a'); // past the free frames: counted again
  await p2.take('a');
  assert.equal(c2.t, 1_000_000 + WINDOW_MS);
});

test('sessions sharing a pacer wait their turn together; a new limit applies to the next frame', async () => {
  const { pacer, clock } = fakePacer(2);
  const times: number[] = [];
  await Promise.all(Array.from({ length: 6 }, () => pacer.take().then(() => times.push(clock.t))));
  times.sort((a, b) => a - b);
  for (let i = 2; i < times.length; i++) assert.ok(times[i] - times[i - 2] >= WINDOW_MS, `frames ${i - 2} and ${i}`);
  pacer.limit(100);
  const before = clock.t;
  for (let i = 0; i < 50; i++) await pacer.take();
  assert.equal(clock.t, before, 'a raised limit lets frames go at once');
});

test('a provider announcing no requests at all still gets one a minute, not a busy loop', async () => {
  const { pacer, clock } = fakePacer(0);
  const start = clock.t;
  for (let i = 0; i < 3; i++) await pacer.take();
  assert.equal(clock.t - start, 2 * WINDOW_MS);
});

test('one pacer per user and provider', () => {
  const a = pacerFor('wss://p.example/ws', 'token-a', 10);
  assert.equal(pacerFor('wss://p.example/ws', 'token-a', 20), a);
  assert.notEqual(pacerFor('wss://p.example/ws', 'token-b', 10), a);
  assert.notEqual(pacerFor('wss://q.example/ws', 'token-a', 10), a);
});

test('a frame that must wait is told to the pacer, and to who watches that user', async (t) => {
  const clock = { t: 0 };
  let waits = 0;
  const pacer = new RatePacer(
    2,
    () => clock.t,
    async (ms) => void (clock.t += ms),
    () => waits++,
  );
  await pacer.take();
  await pacer.take();
  assert.equal(waits, 0, 'frames under the limit go without a wait');
  await pacer.take();
  assert.equal(waits, 1);

  t.mock.timers.enable({ apis: ['setTimeout', 'Date'] }); // the shared pacer sleeps on the real timers
  const told: string[] = [];
  const stop = onPacedWait('token-w', () => told.push('w'));
  onPacedWait('token-other', () => told.push('other'));
  const shared = pacerFor('wss://p.example/ws', 'token-w', 1);
  await shared.take();
  assert.deepEqual(told, [], 'under the limit: nobody is told');
  const waiting = shared.take();
  assert.deepEqual(told, ['w'], "told at once, and only this user's watchers");
  t.mock.timers.tick(WINDOW_MS);
  await waiting;
  stop();
  const next = shared.take();
  assert.deepEqual(told, ['w'], 'an unsubscribed watcher is not told');
  t.mock.timers.tick(WINDOW_MS);
  await next;
});

test("a realm sharing the rate with others (the extension's workers) paces to its part", async (t) => {
  sharePace(3);
  t.mock.timers.enable({ apis: ['setTimeout'] });
  try {
    const pacer = pacerFor('wss://share.example', 'share-token', 30);
    let waits = 0;
    const unwatch = onPacedWait('share-token', () => waits++);
    for (let i = 0; i < 10; i++) await pacer.take();
    assert.equal(waits, 0, 'its ten go at once');
    void pacer.take();
    assert.equal(waits, 1, 'the eleventh waits for the window');
    unwatch();
  } finally {
    t.mock.timers.reset();
    sharePace(1);
  }
});
