import assert from 'node:assert/strict';
import { describe, it, mock } from 'node:test';
import { AT_MOST_MS, EVERY_MS, keepAwake } from '../lib/keep-awake.js';

describe('keepAwake', () => {
  it('touches an extension API every few seconds while the work runs, and stops when it is done', async () => {
    mock.timers.enable({ apis: ['setInterval', 'Date'] });
    try {
      let touched = 0;
      let finish!: (v: string) => void;
      const done = keepAwake(new Promise<string>((r) => (finish = r)), async () => void touched++);
      mock.timers.tick(EVERY_MS * 5);
      assert.equal(touched, 5);
      finish('decrypted');
      assert.equal(await done, 'decrypted');
      mock.timers.tick(EVERY_MS * 5);
      assert.equal(touched, 5, 'no touch after the work');
    } finally {
      mock.timers.reset();
    }
  });

  it('gives up keeping awake work that never ends', async () => {
    mock.timers.enable({ apis: ['setInterval', 'Date'] });
    try {
      let touched = 0;
      void keepAwake(new Promise(() => {}), async () => void touched++);
      for (let t = 0; t < AT_MOST_MS * 2; t += EVERY_MS) mock.timers.tick(EVERY_MS);
      assert.equal(touched, AT_MOST_MS / EVERY_MS - 1);
    } finally {
      mock.timers.reset();
    }
  });

  it('passes on the failure of the work, and a failed touch is no failure', async () => {
    await assert.rejects(
      keepAwake(Promise.reject(new Error('damaged')), () => Promise.reject(new Error('stopped'))),
      /damaged/,
    );
  });
});
