// Waiting for a provider that is down (private/provider-health.ts and
// provider-watch.ts): tries back off to a quarter of an hour, the messages
// kept for it go out again at the next try, a restarted background (nothing
// kept) asks the provider whether it is back and then has the mail looked at
// again, a refused token stops everything until the user connects again, and
// the status says all of it in plain words.
import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { afterFailure, healthText, RETRY_ALARM, RETRY_MS } from '../private/provider-health.js';
import { ProviderWatch } from '../private/provider-watch.js';
import { PrivateStore } from '../private/store.js';
import type { WorkerFailure } from '../private/worker-protocol.js';

const DOWN: WorkerFailure = { code: 'provider_unreachable', detail: 'cannot connect to ws://127.0.0.1:1/session' };
let n = 0;

function watchWith(opts: { kept?: () => boolean; probe?: () => Promise<void> } = {}) {
  let now = 1_000_000;
  const store = PrivateStore.open(`health-test-${n++}`);
  const alarms: (number | 'cleared')[] = [];
  let ready = 0;
  let changed = 0;
  const watch = new ProviderWatch({
    store: () => store,
    retryKept: opts.kept ?? (() => false),
    probe: opts.probe ?? (async () => {}),
    failureOf: (e) => (e as { failure: WorkerFailure }).failure,
    ready: () => void ready++,
    changed: () => void changed++,
    alarms: {
      create: (name, { when }) => void (name === RETRY_ALARM && alarms.push(when)),
      clear: async () => void alarms.push('cleared'),
    },
    now: () => now,
  });
  return {
    watch,
    store,
    alarms,
    ready: () => ready,
    changed: () => changed,
    tick: (ms: number) => (now += ms),
  };
}

describe('provider health', () => {
  it('waits longer after each failed try, up to a quarter of an hour, from when it first failed', () => {
    let h = afterFailure(undefined, DOWN, 0);
    const waits: number[] = [];
    for (let t = 0; t < 8; t++) {
      assert.ok(h?.state === 'waiting');
      waits.push(h.retryAt - t * 1000);
      assert.equal(h.since, 0, 'since the first failure');
      h = afterFailure(h, DOWN, (t + 1) * 1000);
    }
    assert.deepEqual(waits, [...RETRY_MS, 900_000, 900_000]);
    assert.equal(Math.max(...RETRY_MS), 15 * 60_000);
  });

  it('a refused token is refused until the user connects again; a tampered package says nothing about health', () => {
    const refused = afterFailure(undefined, { code: 'bad_token', detail: 'unauthenticated' }, 5);
    assert.deepEqual(refused, { state: 'refused', since: 5, detail: 'unauthenticated' });
    assert.equal(afterFailure(undefined, { code: 'package_tampered', detail: 'x' }, 5), undefined);
  });

  it('says what happens, when, and what to do, in plain words', () => {
    const waiting = afterFailure(undefined, DOWN, Date.UTC(2026, 0, 1, 9, 0))!;
    assert.match(
      healthText(waiting, 'popup', 15),
      /^Waiting for your provider: it has not answered since .+\. 15 messages are waiting and are checked as soon as it answers\. Next try at .+\.$/,
    );
    assert.match(healthText(waiting, 'popup', 1), / 1 message is waiting /);
    assert.match(
      healthText({ state: 'refused', since: 0, detail: '' }, 'settings'),
      /Enter a new access token below and connect again\./,
    );
    assert.doesNotMatch(healthText({ state: 'refused', since: 0, detail: '' }, 'popup'), /unauthenticated|token below/);
  });
});

describe('ProviderWatch', () => {
  it('a failure sets the next try; the try hands the kept messages to the worker again', async () => {
    let kept = 0;
    const w = watchWith({ kept: () => (kept++, true) });
    await w.watch.failed(DOWN);
    assert.equal(w.alarms.at(-1), 1_000_000 + RETRY_MS[0]);
    assert.equal((await (await w.store).health())?.state, 'waiting', 'kept for a restarted background');
    await w.watch.retry();
    assert.equal(kept, 1);
    // Their batch fails again: the next try waits longer.
    w.tick(RETRY_MS[0]);
    await w.watch.failed(DOWN);
    assert.equal(w.alarms.at(-1), 1_000_000 + RETRY_MS[0] + RETRY_MS[1]);
    // …and succeeds: healthy, the alarm cleared, and the mail that waited is looked at.
    await w.watch.answered();
    assert.equal(await (await w.store).health(), undefined);
    assert.equal(w.alarms.at(-1), 'cleared');
    assert.equal(w.ready(), 1);
  });

  it('nothing kept (the background was restarted): the provider is asked whether it is back, then the mail is looked at', async () => {
    let up = false;
    const w = watchWith({
      probe: async () => {
        if (!up) throw { failure: DOWN };
      },
    });
    await w.watch.failed(DOWN);
    await w.watch.retry();
    assert.equal(w.ready(), 0, 'still down');
    assert.equal(w.alarms.at(-1), 1_000_000 + RETRY_MS[1], 'a longer wait');
    up = true;
    await w.watch.retry();
    assert.equal(w.ready(), 1);
    assert.equal(await (await w.store).health(), undefined);
  });

  it('a healthy provider’s answers change nothing (no writes, no signal); a refused token is not retried', async () => {
    let probed = 0;
    const w = watchWith({ probe: async () => void probed++ });
    await w.watch.answered();
    assert.equal(w.changed(), 0);
    await w.watch.failed({ code: 'bad_token', detail: 'unauthenticated' });
    assert.equal((await w.watch.health())?.state, 'refused');
    assert.equal(w.alarms.at(-1), 'cleared', 'no try is set');
    await w.watch.retry();
    assert.equal(probed, 0);
  });
});
