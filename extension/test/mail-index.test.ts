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

describe('MailIndex', () => {
  it('indexes decrypted mail while unlocked, answers searches, and refuses while locked', async () => {
    let live = ['first passphrase'];
    const index = new MailIndex(async () => live, 'mail-index-test-1');
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

    live = [];
    assert.equal(await index.add(source('c', 'x'), 'pangolin again'), false, 'nothing is indexed while locked');
    const locked = await index.answer(query('pangolin'));
    assert.equal(locked.ok, false);
    assert.equal(!locked.ok && locked.code, 'locked');

    // Unlocking with a second key's passphrase first still finds the index's own passphrase.
    live = ['second passphrase', 'first passphrase'];
    const again = await index.answer(query('pangolin'));
    assert.ok(again.ok);
    assert.deepEqual(
      again.hits.map((h) => h.id),
      ['a'],
    );
    await index.close();
  });

  it('opens the index (deriving its key) when warmed up after an unlock, not at the first search', async () => {
    const name = 'mail-index-test-warm';
    const exists = async () => (await indexedDB.databases()).some((d) => d.name === name);
    const index = new MailIndex(async () => ['a passphrase'], name);
    assert.equal(await exists(), false);
    await index.warmUp();
    assert.equal(await exists(), true);
    await index.close();
  });
});
