// "Index mailbox" in the webmail pauses between two messages and resumes
// from the next one: every message is read once.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { indexFrom, newPass } from '../content/index-pass.js';
import type { BadgeInfo } from '../lib/messages.js';

const links = Array.from({ length: 6 }, (_, i) => new URL(`https://mail.example/m/${i}`));
const decrypted = { info: { status: 'decrypted' } as BadgeInfo };

describe('Index mailbox pass', () => {
  it('stops after the message being read when paused, and resumes from the next', async () => {
    const read: string[] = [];
    let pausing = false;
    const reader = async (link: URL) => {
      read.push(link.pathname);
      if (read.length === 2) pausing = true; // the user clicks Pause while message 2 is read
      return decrypted;
    };
    const progress: number[] = [];
    const pass = newPass();
    const run = () =>
      indexFrom(
        links,
        reader,
        pass,
        () => pausing,
        (done) => progress.push(done),
      );
    await run();
    assert.equal(pass.next, 2);
    assert.deepEqual(progress, [1, 2]);

    pausing = false;
    await run();
    assert.deepEqual(
      read,
      links.map((l) => l.pathname),
    );
    assert.deepEqual(progress, [1, 2, 3, 4, 5, 6]);
    assert.equal(pass.tally.indexed, 6);
  });

  it('stops at a locked key, counting failures in plain words', async () => {
    const outcomes = [
      () => decrypted,
      () => {
        throw new Error('The page could not be read.');
      },
      () => ({ info: { status: 'locked' } as BadgeInfo }),
    ];
    const pass = newPass();
    let i = 0;
    await indexFrom(
      links,
      async () => outcomes[i++](),
      pass,
      () => false,
      () => {},
    );
    assert.equal(pass.next, 3);
    assert.deepEqual([pass.tally.indexed, pass.tally.unread, pass.tally.locked], [1, 1, 1]);
    assert.deepEqual([...pass.tally.reasons], ['The page could not be read.']);
  });
});
