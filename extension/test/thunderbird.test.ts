import assert from 'node:assert/strict';
import { afterEach, before, describe, it } from 'node:test';
import { decryptBlock, type DecryptResult } from '../lib/decrypt.js';
import type { MailSource } from '../lib/messages.js';
import { describeDisplayedMessage, indexThunderbirdMail } from '../thunderbird/displayed-message.js';
import { inlinePgpMessage, makeParty, type Party } from './mail-fixtures.js';

let alice: Party, bob: Party;
before(async () => {
  [alice, bob] = await Promise.all([makeParty('Alice', 'alice@example.org'), makeParty('Bob', 'bob@example.org')]);
});

/** A fake `messenger` with one displayed message. */
function fakeThunderbird(raw: string, full: { decryptionStatus?: string; parts?: unknown[] }) {
  const calls: string[] = [];
  (globalThis as { messenger?: unknown }).messenger = {
    messageDisplay: {
      getDisplayedMessage: async (tabId: number) => {
        calls.push(`displayed:${tabId}`);
        return {
          id: 7,
          author: 'Bob <bob@example.org>',
          subject: 'Hi',
          date: new Date('2026-11-21T10:00:00Z'),
          recipients: ['alice@example.org'],
          headerMessageId: 'abc@example.org',
        };
      },
    },
    messages: {
      getRaw: async (id: number, opts: { decrypt: boolean }) => {
        calls.push(`raw:${id}:${opts.decrypt}`);
        return raw;
      },
      getFull: async (id: number) => {
        calls.push(`full:${id}`);
        return full;
      },
    },
  };
  return calls;
}
afterEach(() => delete (globalThis as { messenger?: unknown }).messenger);

function deps(keys: 'alice' | 'none') {
  const indexed: [MailSource, string][] = [];
  const decrypted: MailSource[] = [];
  return {
    indexed,
    decrypted,
    deps: {
      decrypt: async (block: Parameters<typeof decryptBlock>[0], source: MailSource): Promise<DecryptResult> => {
        decrypted.push(source);
        const unlocked = keys === 'alice' ? [alice.privateKey] : [];
        return decryptBlock(block, { unlocked, lockedKeyIds: new Set(), verificationKeys: [bob.publicKey] });
      },
      index: async (source: MailSource, text: string) => void indexed.push([source, text]),
    },
  };
}

describe('Thunderbird displayed message', () => {
  it('decrypts the raw (still encrypted) message with our keys and verifies the signature', async () => {
    const calls = fakeThunderbird(await inlinePgpMessage(bob, alice, 'Hi', 'hello from bob'), {});
    const d = deps('alice');
    const r = await describeDisplayedMessage(3, d.deps);
    assert.equal(r.decryptedBy, 'extension');
    assert.equal(r.result?.text, 'hello from bob');
    assert.equal(r.result?.signature.status, 'valid');
    assert.deepEqual(calls, ['displayed:3', 'raw:7:false']);
    assert.equal(d.decrypted[0].id, 'thunderbird:abc@example.org');
    assert.equal(d.decrypted[0].date, '2026-11-21T10:00:00.000Z');
  });

  it("falls back to Thunderbird's own decryption and indexes its plaintext", async () => {
    fakeThunderbird(await inlinePgpMessage(bob, alice, 'Hi', 'secret'), {
      decryptionStatus: 'success',
      parts: [
        { contentType: 'text/plain', body: 'decrypted by TB' },
        { contentType: 'text/html', body: '<p>and <b>html</b></p>' },
      ],
    });
    const d = deps('none');
    const r = await describeDisplayedMessage(3, d.deps);
    assert.equal(r.decryptedBy, 'thunderbird');
    assert.equal(r.result?.status, 'not-for-this-key');
    assert.match(r.summary, /Decrypted by Thunderbird's OpenPGP/);
    assert.deepEqual(
      d.indexed.map(([, text]) => text),
      ['decrypted by TB\nand html'],
    );
  });

  it('reports plain mail and undecryptable mail without indexing anything', async () => {
    fakeThunderbird('From: x\r\n\r\nplain text', {});
    const d = deps('alice');
    const plain = await describeDisplayedMessage(1, d.deps);
    assert.equal(plain.decryptedBy, 'none');
    assert.match(plain.summary, /not OpenPGP/);

    fakeThunderbird(await inlinePgpMessage(bob, alice, 'Hi', 'x'), { decryptionStatus: 'fail' });
    const locked = deps('none');
    const failed = await describeDisplayedMessage(1, locked.deps);
    assert.equal(failed.decryptedBy, 'none');
    assert.equal(failed.thunderbirdStatus, 'fail');
    assert.equal(failed.result?.status, 'not-for-this-key');
    assert.deepEqual([...d.indexed, ...locked.indexed], []);
  });
});

describe('Thunderbird mailbox indexing', () => {
  it('lists every page of messages first, then decrypts and indexes each with progress', async () => {
    const mail = [
      await inlinePgpMessage(bob, alice, 'One', 'first secret'),
      'From: x\r\n\r\nplain',
      await inlinePgpMessage(bob, alice, 'Two', 'second secret'),
    ];
    const header = (id: number) => ({
      id,
      author: 'Bob',
      subject: `m${id}`,
      date: '2026-11-21T10:00:00Z',
      recipients: [],
      headerMessageId: `m${id}@x`,
    });
    (globalThis as { messenger?: unknown }).messenger = {
      messageDisplay: {},
      messages: {
        query: async () => ({ id: 'page2', messages: [header(0), header(1)] }),
        continueList: async (id: string) => {
          assert.equal(id, 'page2');
          return { id: null, messages: [header(2)] };
        },
        getRaw: async (id: number) => mail[id],
        getFull: async () => ({ decryptionStatus: 'none' }),
      },
    };
    const d = deps('alice');
    const progress: [number, number][] = [];
    const tally = await indexThunderbirdMail(d.deps, (t) => progress.push([t.done, t.total]));
    assert.deepEqual(progress, [
      [1, 3],
      [2, 3],
      [3, 3],
    ]);
    assert.deepEqual(tally, { done: 3, total: 3, indexed: 2, locked: 0, failed: 0 });
    assert.deepEqual(
      d.decrypted.map((s) => s.subject),
      ['m0', 'm2'],
    );
  });
});
