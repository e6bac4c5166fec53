import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MailIndex } from '../lib/mail-index.js';
import { SEARCH_MESSAGE } from '../search/index.js';

const source = (id: string, subject: string) => ({
  id,
  url: `http://127.0.0.1/mail/m/${id}`,
  from: 'Bob <bob@example.org>',
  subject,
  date: 'Sat, 21 Nov 2026 10:00:00 +0000',
});
const query = (q: string) => ({ type: SEARCH_MESSAGE, query: q }) as const;

/** A MailIndex whose kept derived key is a variable, as UnlockCache keeps it. */
function indexWithKeptKey(name: string) {
  const kept: { key?: Uint8Array<ArrayBuffer> } = {};
  const index = new MailIndex(
    async () => kept.key,
    async (k) => void (kept.key = k),
    name,
  );
  return { index, kept };
}

describe('MailIndex', () => {
  it('indexes decrypted mail while unlocked, answers searches, and refuses while locked', async () => {
    const { index, kept } = indexWithKeptKey('mail-index-test-1');
    await index.unlock('first passphrase');
    assert.equal(
      await index.add(source('a', 'Quarterly'), 'the pangolin budget is approved', 'Protected subject'),
      true,
    );
    await index.add(source('b', 'Other'), 'nothing to see here');
    const found = await index.answer(query('pangolin'));
    assert.ok(found.ok);
    assert.deepEqual(
      found.hits.map((h) => [h.id, h.subject, h.url]),
      [['a', 'Protected subject', 'http://127.0.0.1/mail/m/a']],
    );

    const derived = kept.key!;
    kept.key = undefined;
    assert.equal(await index.add(source('c', 'x'), 'pangolin again'), false, 'nothing is indexed while locked');
    const locked = await index.answer(query('pangolin'));
    assert.equal(locked.ok, false);
    assert.equal(!locked.ok && locked.code, 'locked');

    // Another key's passphrase does not open it; its own does again.
    await index.unlock('second passphrase');
    assert.equal(kept.key, undefined);
    assert.equal((await index.answer(query('pangolin'))).ok, false);
    await index.unlock('first passphrase');
    assert.deepEqual(kept.key, derived);
    const again = await index.answer(query('pangolin'));
    assert.ok(again.ok);
    assert.deepEqual(
      again.hits.map((h) => h.id),
      ['a'],
    );
    await index.close();
  });

  it('opens the index (deriving its key) at the unlock, not at the first search', async () => {
    const name = 'mail-index-test-warm';
    const exists = async () => (await indexedDB.databases()).some((d) => d.name === name);
    const { index, kept } = indexWithKeptKey(name);
    assert.equal(await exists(), false);
    await index.unlock('a passphrase');
    assert.equal(await exists(), true);
    assert.equal(kept.key?.length, 32);
    await index.close();
  });

  it('mail decrypted while an unlock derives the index key waits for it and is indexed', async () => {
    const { index } = indexWithKeptKey('mail-index-test-racing');
    const unlocking = index.unlock('a passphrase'); // not awaited: content scripts retry at once
    assert.equal(await index.add(source('a', 'Early'), 'the tapir report'), true);
    await unlocking;
    const found = await index.answer(query('tapir'));
    assert.ok(found.ok && found.hits.length === 1);
    await index.close();
  });

  it('a restarted background opens the index with the kept derived key, without the passphrase', async () => {
    const first = indexWithKeptKey('mail-index-test-restart');
    await first.index.unlock('a passphrase');
    await first.index.add(source('a', 'Kept'), 'the walrus archive');
    await first.index.close();
    const restarted = new MailIndex(
      async () => first.kept.key,
      async () => assert.fail('no new key is derived'),
      'mail-index-test-restart',
    );
    const found = await restarted.answer(query('walrus'));
    assert.ok(found.ok);
    assert.deepEqual(
      found.hits.map((h) => h.id),
      ['a'],
    );
    await restarted.close();
  });

  it('gives a webmail list the protected subjects it holds, written or still queued; none while locked', async () => {
    const { index, kept } = indexWithKeptKey('mail-index-test-subjects');
    await index.unlock('a passphrase');
    await index.add(source('x', '...'), 'body x', 'Pangolin budget');
    await index.flush();
    await index.add(source('y', '...'), 'body y', 'Walrus archive'); // still in the write queue
    assert.deepEqual([...(await index.subjects(['x', 'y', 'not-indexed']))].sort(), [
      ['x', 'Pangolin budget'],
      ['y', 'Walrus archive'],
    ]);
    await index.close();
    kept.key = undefined;
    assert.equal((await index.subjects(['x'])).size, 0);
  });
});
