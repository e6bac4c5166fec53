// Thunderbird acting on a private spam verdict (thunderbird/junk.ts) against
// the fake messenger, whose every API tb-schema.test.ts checks against
// Thunderbird's real MV3 schemas: junk flag, move to the Junk folder of the
// message's own account, "not spam" back to that account's Inbox, and a flag
// only when moving is off or the account has no such folder.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { MailFolder } from '../thunderbird/api.js';
import { applySpamVerdict } from '../thunderbird/junk.js';
import { fakeMessenger, header } from './fake-messenger.js';

const folder = (id: string, accountId: string, use?: string): MailFolder => ({
  id,
  accountId,
  specialUse: use ? [use] : [],
});
const aliceInbox = folder('a/INBOX', 'alice', 'inbox');
const aliceJunk = folder('a/Junk', 'alice', 'junk');
const bobJunk = folder('b/Junk', 'bob', 'junk');

function setup(folders = [bobJunk, aliceInbox, aliceJunk]) {
  const m = header(5, { folder: aliceInbox });
  const fake = fakeMessenger({ mail: [{ header: m, raw: '' }], folders });
  return { ...fake, m };
}

describe('Thunderbird junk and move', () => {
  it('flags spam junk and moves it to the Junk folder of its own account', async () => {
    const { api, calls, junk, m } = setup();
    assert.equal(await applySpamVerdict(api, m, true, { move: true }), 'moved');
    assert.deepEqual(calls, ['update:5:{"junk":true}', 'move:5:a/Junk']);
    assert.equal(junk.get(5), true);
    assert.equal(m.folder?.id, 'a/Junk', 'never another account’s Junk');
  });

  it('“not spam” clears the flag and moves it back to that account’s Inbox', async () => {
    const { api, calls, junk, m } = setup();
    await applySpamVerdict(api, m, true, { move: true });
    assert.equal(await applySpamVerdict(api, m, false, { move: true }), 'moved');
    assert.deepEqual(calls.slice(2), ['update:5:{"junk":false}', 'move:5:a/INBOX']);
    assert.equal(junk.get(5), false);
    assert.equal(m.folder?.id, 'a/INBOX');
  });

  it('with moving off (local-only marking) only the flag is set: the server learns nothing', async () => {
    const { api, calls, m } = setup();
    assert.equal(await applySpamVerdict(api, m, true, { move: false }), 'flagged');
    assert.deepEqual(calls, ['update:5:{"junk":true}']);
  });

  it('an account without a Junk folder gets the flag only; ham already in the Inbox stays', async () => {
    const noJunk = setup([aliceInbox, bobJunk]);
    assert.equal(await applySpamVerdict(noJunk.api, noJunk.m, true, { move: true }), 'flagged');
    assert.deepEqual(noJunk.calls, ['update:5:{"junk":true}']);
    const ham = setup();
    assert.equal(await applySpamVerdict(ham.api, ham.m, false, { move: true }), 'in-place');
    assert.deepEqual(ham.calls, ['update:5:{"junk":false}']);
  });

  it('“not spam” goes back to the folder it was taken from, or the Inbox if that folder is gone', async () => {
    const work = folder('a/Work', 'alice');
    const { api, calls, m } = setup([aliceInbox, aliceJunk, work]);
    m.folder = aliceJunk;
    m.junk = true;
    assert.equal(await applySpamVerdict(api, m, false, { move: true, backTo: 'a/Work' }), 'moved');
    assert.equal(m.folder?.id, 'a/Work');
    m.folder = aliceJunk;
    assert.equal(await applySpamVerdict(api, m, false, { move: true, backTo: 'a/Deleted' }), 'moved');
    assert.equal(m.folder?.id, 'a/INBOX');
    assert.deepEqual(calls, ['update:5:{"junk":false}', 'move:5:a/Work', 'move:5:a/INBOX']);
  });
});
