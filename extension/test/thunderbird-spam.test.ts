// Thunderbird's private spam check of new and displayed mail
// (thunderbird/spam-check.ts) against the fake messenger, with a real
// PrivateStore (fake-indexeddb) and a fake worker: only mail carrying the
// provider-assigned X-PMF-Message-Id is asked about, under that id, once;
// a spam verdict flags the message junk and moves it to its account's Junk
// folder (or only flags it with local-only marking); nothing is asked while
// the check is off or not connected.
import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { accountOf, PrivateStore, type ProviderConfig } from '../private/store.js';
import type { ClassifyItem, WorkerEvent } from '../private/worker-protocol.js';
import type { MailFolder, MessageHeader, MessagePart } from '../thunderbird/api.js';
import { watchSpam } from '../thunderbird/spam-check.js';
import { fakeMessenger, header, type FakeMail } from './fake-messenger.js';

const PMF_ID = 'pmf-0123456789abcdef0123456789abcdef';
const PROVIDER: ProviderConfig = { url: 'http://127.0.0.1:8080', token: 't0ken' };
const inbox: MailFolder = { id: 'a/INBOX', accountId: 'alice', specialUse: ['inbox'] };
const junkFolder: MailFolder = { id: 'a/Junk', accountId: 'alice', specialUse: ['junk'] };
const ARMORED = '-----BEGIN PGP MESSAGE-----\n\nwcBMA0fake\n-----END PGP MESSAGE-----\n';

function encrypted(id: number, extraHeaders: string, full?: MessagePart): FakeMail {
  const raw = `${extraHeaders}Message-ID: <m${id}@example.org>\r\nSubject: ...\r\nFrom: bob@example.org\r\n\r\n${ARMORED}`;
  return { header: header(id, { folder: { ...inbox } }), raw, full };
}

let n = 0;
async function setup(
  mail: FakeMail[],
  opts: { spam?: boolean; connected?: boolean; decrypts?: boolean; settings?: object } = {},
) {
  const store = await PrivateStore.open(`tb-spam-test-${n++}`);
  if (opts.connected ?? true) await store.setProvider(PROVIDER);
  if (opts.settings) await store.setSettings(opts.settings);
  const fake = fakeMessenger({ mail, folders: [inbox, junkFolder] });
  const requests: ClassifyItem[][] = [];
  const watch = watchSpam(fake.api, {
    store: async () => store,
    // The worker: records the verdict before reporting it, as worker-service.ts does.
    classify: async (provider, items, onEvent: (e: WorkerEvent) => void) => {
      requests.push(items);
      for (const { messageId } of items) {
        const spam = opts.spam ?? true;
        await store.putVerdict(accountOf(provider), messageId, { kind: 'verdict', spam, at: Date.now() });
        onEvent({ event: 'outcome', outcome: { kind: 'verdict', messageId, spam } });
      }
    },
    decrypt: async () => ((opts.decrypts ?? true) ? 'Content-Type: text/plain\r\n\r\nCheap pills, buy now' : undefined),
    failureOf: (e) => ({ code: 'protocol', detail: String(e) }),
  });
  const fire = (name: string, ...args: unknown[]) =>
    fake.listeners[name].forEach((l) => (l as (...a: unknown[]) => void)(...args));
  const newMail = (...headers: MessageHeader[]) =>
    fire('messages.onNewMailReceived', inbox, { id: null, messages: headers });
  const displayed = (...headers: MessageHeader[]) =>
    fire('messageDisplay.onMessagesDisplayed', { id: 3 }, { id: null, messages: headers });
  /** Until nothing is left to do: the message queue, then the verdict's follow-up. */
  const settled = async () => {
    const deadline = Date.now() + 5000;
    for (let last: unknown; last !== watch.idle() && Date.now() < deadline;) {
      last = watch.idle();
      await last;
      await new Promise((r) => setImmediate(r));
    }
  };
  /** Polls (with a deadline) for what the queue's batch does after the listener's work is done. */
  const until = async (done: () => boolean | Promise<boolean>) => {
    for (const deadline = Date.now() + 5000; !(await done()); await new Promise((r) => setTimeout(r, 5)))
      assert.ok(Date.now() < deadline, 'timed out');
    await settled();
  };
  const acted = () => until(() => fake.calls.some((c) => c.startsWith('update:')));
  return { ...fake, store, requests, newMail, displayed, settled, until, acted };
}

describe('Thunderbird private spam check', () => {
  it('new mail with the provider’s id: one request under that id, spam flagged and moved to Junk', async () => {
    const m = encrypted(7, `X-PMF-Message-Id: ${PMF_ID}\r\n`);
    const t = await setup([m]);
    t.newMail(m.header);
    await t.acted();
    assert.equal(t.requests.length, 1);
    assert.deepEqual(
      t.requests[0].map((i) => i.messageId),
      [PMF_ID],
      'the provider-assigned id, never the Message-ID',
    );
    assert.match(t.requests[0][0].raw, /Cheap pills/, 'the decrypted message');
    assert.match(t.requests[0][0].raw, /^Subject: /m, 'with its outer headers');
    assert.deepEqual(
      t.calls.filter((c) => /^(update|move)/.test(c)),
      ['update:7:{"junk":true}', 'move:7:a/Junk'],
    );
    assert.equal(m.header.folder?.id, 'a/Junk');
  });

  it('is asked once: shown while it arrives, and shown again after its verdict', async () => {
    const m = encrypted(7, `X-PMF-Message-Id: ${PMF_ID}\r\n`);
    const t = await setup([m], { spam: false });
    t.newMail(m.header);
    t.displayed(m.header);
    await t.until(async () => (await t.store.verdict(accountOf(PROVIDER), PMF_ID)) !== undefined);
    t.displayed(m.header);
    await t.settled();
    assert.equal(t.requests.length, 1);
    assert.deepEqual(
      t.calls.filter((c) => /^(update|move)/.test(c)),
      [],
      'not spam: nothing changes',
    );
  });

  it('mail without the provider’s id (another account’s, a sender’s lookalike) is not asked about', async () => {
    const lookalike = encrypted(8, `X-PMF-Message-Id: chosen-by-sender\r\n`);
    lookalike.raw = lookalike.raw.replace('<m8@example.org>', `<${PMF_ID}>`);
    const plain = encrypted(7, '');
    const t = await setup([plain, lookalike]);
    t.newMail(plain.header, lookalike.header);
    await t.settled();
    assert.deepEqual(t.requests, []);
    assert.ok(!t.calls.some((c) => c.startsWith('full:')), 'not even decrypted');
  });

  it('spam check off, or not connected: no request, the message is not even read', async () => {
    for (const opts of [{ settings: { spamCheck: false } }, { connected: false }]) {
      const m = encrypted(7, `X-PMF-Message-Id: ${PMF_ID}\r\n`);
      const t = await setup([m], opts);
      t.newMail(m.header);
      t.displayed(m.header);
      await t.settled();
      assert.deepEqual(t.requests, []);
      assert.deepEqual(t.calls, []);
    }
  });

  it('local-only marking: spam is flagged junk and stays where it is', async () => {
    const m = encrypted(7, `X-PMF-Message-Id: ${PMF_ID}\r\n`);
    const t = await setup([m], { settings: { moveSpam: false } });
    t.newMail(m.header);
    await t.acted();
    assert.equal(t.requests.length, 1);
    assert.deepEqual(
      t.calls.filter((c) => /^(update|move)/.test(c)),
      ['update:7:{"junk":true}'],
    );
    assert.equal(m.header.folder?.id, 'a/INBOX');
  });

  it('a message only Thunderbird can decrypt is checked with the text it hands the add-on', async () => {
    const full: MessagePart = {
      decryptionStatus: 'success',
      contentType: 'multipart/mixed',
      parts: [{ contentType: 'text/plain', body: 'Thunderbird decrypted this' }],
    };
    const m = encrypted(7, `X-PMF-Message-Id: ${PMF_ID}\r\n`, full);
    const t = await setup([m], { decrypts: false });
    t.displayed(m.header);
    await t.acted();
    assert.equal(t.requests.length, 1);
    assert.match(t.requests[0][0].raw, /Thunderbird decrypted this/);
  });

  it('a message neither can decrypt is not asked about', async () => {
    const m = encrypted(7, `X-PMF-Message-Id: ${PMF_ID}\r\n`);
    const t = await setup([m], { decrypts: false });
    t.newMail(m.header);
    await t.settled();
    assert.deepEqual(t.requests, []);
  });
});
