// Thunderbird: a first indexing of all mail can be paused, and a new run
// (after a pause, a crash or a restart) skips what is already indexed.
import assert from 'node:assert/strict';
import { afterEach, before, describe, it } from 'node:test';
import { decryptBlock } from '../lib/decrypt.js';
import type { MailSource } from '../lib/messages.js';
import { indexThunderbirdMail, type Deps } from '../thunderbird/displayed-message.js';
import { fakeMessenger, header } from './fake-messenger.js';
import { inlinePgpMessage, makeParty, type Party } from './mail-fixtures.js';

let alice: Party, bob: Party;
before(async () => {
  [alice, bob] = await Promise.all([makeParty('Alice', 'alice@example.org'), makeParty('Bob', 'bob@example.org')]);
});
afterEach(() => delete (globalThis as { messenger?: unknown }).messenger);

describe('Thunderbird first indexing', () => {
  it('pauses where asked and resumes without reading indexed mail again', async () => {
    const mail = await Promise.all(
      [0, 1, 2, 3].map(async (id) => ({
        header: header(id),
        raw: await inlinePgpMessage(bob, alice, `s${id}`, `secret ${id}`),
      })),
    );
    const fake = fakeMessenger({ mail });
    (globalThis as { messenger?: unknown }).messenger = fake.api;
    // What the background's index holds: our own decryptions are indexed as they happen.
    const index = new Set<string>();
    const deps: Deps = {
      decrypt: async (block, source: MailSource) => {
        const r = await decryptBlock(block, {
          unlocked: [alice.privateKey],
          lockedKeyIds: new Set(),
          verificationKeys: [],
        });
        if (r.status === 'decrypted') index.add(source.id);
        return r;
      },
      index: async (source) => void index.add(source.id),
    };
    const control = { paused: () => index.size >= 2, isIndexed: async (id: string) => index.has(id) };
    const first = await indexThunderbirdMail(deps, () => {}, undefined, control);
    assert.deepEqual(first, { done: 2, total: 4, indexed: 2, locked: 0, failed: 0 });

    fake.calls.length = 0;
    const resumed = await indexThunderbirdMail(deps, () => {}, undefined, {
      paused: () => false,
      isIndexed: async (id) => index.has(id),
    });
    assert.deepEqual(resumed, { done: 4, total: 4, indexed: 4, locked: 0, failed: 0 });
    const reads = fake.calls.filter((c) => c.startsWith('raw:') || c.startsWith('full:'));
    assert.deepEqual(reads, ['raw:2:false', 'raw:3:false'], 'only the messages not yet indexed are read');
    assert.equal(index.size, 4);
  });
});
