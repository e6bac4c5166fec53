// Keeping the background awake (lib/keep-awake.ts): touched while work
// runs, never past the bound for work that hangs, and the worker pool's
// calls held with their events as progress.
import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { AT_MOST_MS, EVERY_MS, KeepAwake } from '../lib/keep-awake.js';
import { WorkerPool } from '../private/worker-pool.js';
import type { WorkerEvent } from '../private/worker-protocol.js';

/** Runs `fn` with fake interval timers and clock; `tick(ms)` advances them a period at a time. */
async function withFakeTime(fn: (tick: (ms: number) => void) => Promise<void>): Promise<void> {
  mock.timers.enable({ apis: ['setInterval', 'Date'] });
  try {
    await fn((ms) => {
      for (let t = 0; t < ms; t += EVERY_MS) mock.timers.tick(EVERY_MS);
    });
  } finally {
    mock.timers.reset();
  }
}

const counter = () => {
  const c = { touched: 0, touch: async () => void c.touched++ };
  return c;
};

describe('KeepAwake', () => {
  it('touches an extension API every few seconds while the work runs, and stops when it is done', () =>
    withFakeTime(async (tick) => {
      const c = counter();
      let finish!: (v: string) => void;
      const done = new KeepAwake(c.touch).during(new Promise<string>((r) => (finish = r)));
      tick(EVERY_MS * 5);
      assert.equal(c.touched, 5);
      finish('decrypted');
      assert.equal(await done, 'decrypted');
      tick(EVERY_MS * 5);
      assert.equal(c.touched, 5, 'no touch after the work');
    }));

  it('stops keeping the background awake for work that never ends once the bound has passed', () =>
    withFakeTime(async (tick) => {
      const c = counter();
      void new KeepAwake(c.touch).during(new Promise(() => {}));
      tick(AT_MOST_MS * 2);
      assert.equal(c.touched, AT_MOST_MS / EVERY_MS - 1);
    }));

  it('keeps one timer for all work: work that hangs does not extend work that ends, nor the other way', () =>
    withFakeTime(async (tick) => {
      const c = counter();
      const awake = new KeepAwake(c.touch);
      void awake.during(new Promise(() => {}));
      tick(AT_MOST_MS / 2);
      let finish!: () => void;
      const later = awake.during(new Promise<void>((r) => (finish = r)));
      tick(AT_MOST_MS / 2);
      assert.equal(c.touched, AT_MOST_MS / EVERY_MS, 'one touch a period, not one per piece of work');
      tick(AT_MOST_MS);
      assert.equal(c.touched, (AT_MOST_MS * 1.5) / EVERY_MS - 1, 'the later work has its own bound');
      finish();
      await later;
      tick(AT_MOST_MS);
      assert.equal(c.touched, (AT_MOST_MS * 1.5) / EVERY_MS - 1);
    }));

  it('work that shows progress stays awake past the bound; once it stops showing progress, the bound holds again', () =>
    withFakeTime(async (tick) => {
      const c = counter();
      const hold = new KeepAwake(c.touch).hold();
      for (let i = 0; i < 3; i++) {
        tick(AT_MOST_MS / 2);
        hold.renew();
      }
      tick(AT_MOST_MS * 2);
      assert.equal(c.touched, (AT_MOST_MS * 2.5) / EVERY_MS - 1);
      hold.renew(); // progress after the bound: awake again, for one bound
      tick(AT_MOST_MS * 2);
      assert.equal(c.touched, (AT_MOST_MS * 3.5) / EVERY_MS - 2);
      hold.release();
      hold.renew(); // no progress after the work is over
      tick(AT_MOST_MS);
      assert.equal(c.touched, (AT_MOST_MS * 3.5) / EVERY_MS - 2);
    }));

  it('passes on the failure of the work, and a failed touch is no failure', async () => {
    await assert.rejects(
      new KeepAwake(() => Promise.reject(new Error('stopped'))).during(Promise.reject(new Error('damaged'))),
      /damaged/,
    );
  });
});

describe('the worker pool keeps the event page awake', () => {
  it('while a call runs, each of its worker events being progress; a silent call no longer once the bound has passed', () =>
    withFakeTime(async (tick) => {
      const c = counter();
      let report!: (e: WorkerEvent) => void;
      let finish!: () => void;
      const worker = {
        call: (_request: unknown, onEvent: (e: WorkerEvent) => void = () => {}) =>
          new Promise<null>((r) => {
            report = onEvent;
            finish = () => r(null);
          }),
      };
      const events: WorkerEvent[] = [];
      const pool = new WorkerPool([worker] as never, new KeepAwake(c.touch));
      const call = pool.call({ kind: 'prepare', provider: {} as never }, (e) => events.push(e));
      tick(AT_MOST_MS - EVERY_MS);
      report({ event: 'slowed' });
      tick(AT_MOST_MS - EVERY_MS);
      assert.deepEqual(events, [{ event: 'slowed' }], 'events still reach the caller');
      assert.equal(c.touched, (2 * AT_MOST_MS) / EVERY_MS - 2, 'awake past the bound while it showed progress');
      tick(AT_MOST_MS);
      assert.equal(c.touched, (2 * AT_MOST_MS) / EVERY_MS - 2, 'asleep once silent past the bound');
      finish();
      await call;
    }));
});
