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
import { accountOf, type ProviderConfig } from '../private/account.js';
import { PrivateStore } from '../private/store.js';
import type { ClassifyItem, WorkerEvent } from '../private/worker-protocol.js';
import type { MailFolder, MessageHeader, MessagePart } from '../thunderbird/api.js';
import { watchSpam } from '../thunderbird/spam-check.js';
import { fakeMessenger, header, type FakeMail } from './fake-messenger.js';

const PMF_ID = 'pmf-0123456789abcdef0123456789abcdef';
const PROVIDER: ProviderConfig = { url: 'http://127.0.0.1:8080', token: 't0ken' };
const inbox: MailFolder = { id: 'a/INBOX', accountId: 'alice', specialUse: ['inbox'] };
const junkFolder: MailFolder = { id: 'a/Junk', accountId: 'alice', specialUse: ['junk'] };
const work: MailFolder = { id: 'a/Work', accountId: 'alice', specialUse: [] };
const ARMORED = '-----BEGIN PGP MESSAGE-----\n\nwcBMA0fake\n-----END PGP MESSAGE-----\n';

function encrypted(id: number, extraHeaders: string, full?: MessagePart): FakeMail {
  const raw = `${extraHeaders}Message-ID: <m${id}@example.org>\r\nSubject: ...\r\nFrom: bob@example.org\r\n\r\n${ARMORED}`;
  return { header: header(id, { folder: { ...inbox } }), raw, full };
}

let n = 0;
/** storage.local as the background hands it over: survives a "restart" (a second watchSpam). */
function memoryArea() {
  const data: Record<string, unknown> = {};
  return {
    data,
    get: async (key: string) => (key in data ? { [key]: structuredClone(data[key]) } : {}),
    set: async (items: Record<string, unknown>) => void Object.assign(data, structuredClone(items)),
  };
}

async function setup(
  mail: FakeMail[],
  opts: {
    spam?: boolean;
    connected?: boolean;
    /** false: not for the add-on's keys; 'locked': its keys are locked. */
    decrypts?: boolean | 'locked' | (() => boolean | 'locked');
    settings?: object;
    /** Holds every classification until it resolves. */
    gate?: Promise<unknown>;
    store?: PrivateStore;
    pending?: ReturnType<typeof memoryArea>;
    relookMs?: number[];
    /** A blocklist hit on each message, after its verdict (the worker's link check). */
    listed?: boolean;
  } = {},
) {
  const store = opts.store ?? (await PrivateStore.open(`tb-spam-test-${n++}`));
  if (!opts.store && (opts.connected ?? true)) await store.setProvider(PROVIDER);
  if (opts.settings) await store.setSettings(opts.settings);
  const fake = fakeMessenger({ mail, folders: [inbox, junkFolder, work] });
  const requests: ClassifyItem[][] = [];
  const pending = opts.pending ?? memoryArea();
  const watch = watchSpam(fake.api, {
    store: async () => store,
    area: pending,
    putBackAfterMs: 0,
    relookMs: opts.relookMs,
    // The worker: records the verdict before reporting it, as worker-service.ts does.
    classify: async (provider, items, onEvent: (e: WorkerEvent) => void) => {
      requests.push(items);
      await opts.gate;
      for (const { messageId } of items) {
        const spam = opts.spam ?? true;
        await store.putVerdict(accountOf(provider), messageId, { kind: 'verdict', spam, at: Date.now() });
        onEvent({ event: 'outcome', outcome: { kind: 'verdict', messageId, spam } });
      }
      if (opts.listed)
        for (const { messageId } of items) {
          const hits = [{ item: 'evil-login.example', category: 'phishing', score: 90, since: '2024-05-30' }];
          onEvent({ event: 'blocklist', blocklist: { messageId, hits } });
        }
    },
    decrypt: async () => {
      const d = typeof opts.decrypts === 'function' ? opts.decrypts() : (opts.decrypts ?? true);
      if (d === 'locked') return 'locked';
      return d ? 'Content-Type: text/plain\r\n\r\nCheap pills, buy now' : undefined;
    },
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
  /** The provider ids asked about so far, sorted. */
  const askedIds = () =>
    requests
      .flat()
      .map((i) => i.messageId)
      .sort();
  return { ...fake, store, requests, askedIds, newMail, displayed, settled, until, acted, watch, pending };
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

  it('found ham, then its link on the provider’s blocklist: flagged and moved to Junk all the same', async () => {
    const m = encrypted(7, `X-PMF-Message-Id: ${PMF_ID}\r\n`);
    const t = await setup([m], { spam: false, listed: true });
    t.newMail(m.header);
    await t.acted();
    assert.deepEqual(
      t.calls.filter((c) => /^(update|move)/.test(c)),
      ['update:7:{"junk":true}', 'move:7:a/Junk'],
    );
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

/** The id the provider's LMTP stage would assign to message i. */
const pmfId = (i: number) => `pmf-${i.toString(16).padStart(32, '0')}`;
const acts = (calls: string[]) => calls.filter((c) => /^(update|move)/.test(c));

describe('Thunderbird: the user says "not spam"', () => {
  it('“Not Junk” on a message the add-on moved puts it back where it came from, and it stays there', async () => {
    const m = encrypted(7, `X-PMF-Message-Id: ${PMF_ID}\r\n`);
    m.header.folder = { ...work };
    const t = await setup([m]);
    t.newMail(m.header);
    await t.until(() => m.header.folder?.id === 'a/Junk');
    // The user's "Not Junk" in Thunderbird (the fake reports it through messages.onUpdated).
    await t.api.messages.update(7, { junk: false });
    await t.until(() => m.header.folder?.id === 'a/Work');
    const v = await t.store.verdict(accountOf(PROVIDER), PMF_ID);
    assert.equal(v?.kind === 'verdict' && v.spam, true, 'the provider’s verdict is kept');
    assert.equal(v?.user?.spam, false, 'with the user’s correction next to it');
    assert.equal(v?.movedFrom, 'a/Work');
    // Shown again, or announced again as new mail: never moved back to Junk.
    t.displayed(m.header);
    t.newMail(m.header);
    await t.settled();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(m.header.folder?.id, 'a/Work');
    assert.equal(m.header.junk, false);
    assert.equal(t.requests.length, 1, 'asked once');
    assert.deepEqual(acts(t.calls), [
      'update:7:{"junk":true}',
      'move:7:a/Junk',
      'update:7:{"junk":false}',
      'move:7:a/Work',
    ]);
  });

  it('moving it out of Junk clears the junk flag and is kept as the user’s correction', async () => {
    const m = encrypted(7, `X-PMF-Message-Id: ${PMF_ID}\r\n`);
    const t = await setup([m]);
    t.newMail(m.header);
    await t.until(() => m.header.folder?.id === 'a/Junk');
    await t.api.messages.move([7], 'a/INBOX', { isUserAction: true }); // the user drags it to the Inbox
    await t.until(() => m.header.junk === false);
    assert.equal((await t.store.verdict(accountOf(PROVIDER), PMF_ID))?.user?.spam, false);
    t.displayed(m.header);
    await t.settled();
    assert.equal(m.header.folder?.id, 'a/INBOX');
    assert.deepEqual(acts(t.calls), [
      'update:7:{"junk":true}',
      'move:7:a/Junk',
      'move:7:a/INBOX',
      'update:7:{"junk":false}',
    ]);
  });

  it('found out of Junk with no move reported (IMAP): the next look keeps it as the user’s correction', async () => {
    const m = encrypted(7, `X-PMF-Message-Id: ${PMF_ID}\r\n`);
    const t = await setup([m]);
    t.newMail(m.header);
    await t.until(() => m.header.folder?.id === 'a/Junk');
    Object.assign(m.header, { folder: { ...inbox }, junk: false }); // Thunderbird moved it; no onMoved came
    t.displayed(m.header);
    await t.until(async () => (await t.store.verdict(accountOf(PROVIDER), PMF_ID))?.user?.spam === false);
    assert.equal(m.header.folder?.id, 'a/INBOX');
    assert.equal(t.requests.length, 1);
  });

  it('“Not Junk” on one Thunderbird moved before the add-on could read it: found outside Junk, kept as the correction', async () => {
    const m = encrypted(7, `X-PMF-Message-Id: ${PMF_ID}\r\n`);
    const mail = [m];
    const t = await setup(mail, { relookMs: [5, 5, 5, 5, 5] });
    t.newMail(m.header);
    await t.until(() => m.header.folder?.id === 'a/Junk');
    // Thunderbird's "Not Junk" in Junk on IMAP: the id is gone when the woken add-on reads it, and the copy
    // shows up in the Inbox under a new id a little later, still carrying the junk keyword.
    const gone = { ...m.header, junk: false };
    mail.splice(0, 1);
    t.fire('messages.onUpdated', gone, { junk: false });
    await new Promise((r) => setTimeout(r, 8));
    const copy = { ...m, header: header(8, { folder: { ...inbox }, junk: true, headerMessageId: 'm7@example.org' }) };
    mail.push(copy);
    await t.until(async () => (await t.store.verdict(accountOf(PROVIDER), PMF_ID))?.user?.spam === false);
    await t.until(() => copy.header.junk === false);
    assert.equal(copy.header.folder?.id, 'a/INBOX');
    assert.deepEqual(acts(t.calls), ['update:7:{"junk":true}', 'move:7:a/Junk', 'update:8:{"junk":false}']);
  });

  it('…but a lookalike with the same Message-ID is left alone when the real one never shows up', async () => {
    const OTHER = 'pmf-fedcba9876543210fedcba9876543210';
    const m = encrypted(7, `X-PMF-Message-Id: ${PMF_ID}\r\n`);
    // Another spam verdict, flagged but never moved by the add-on (local-only marking), same Message-ID.
    const lookalike = {
      ...encrypted(7, `X-PMF-Message-Id: ${OTHER}\r\n`),
      header: header(9, { folder: { ...inbox } }),
    };
    lookalike.header.headerMessageId = m.header.headerMessageId;
    const mail = [m];
    const t = await setup(mail, { relookMs: [1, 1, 1] });
    await t.store.putVerdict(accountOf(PROVIDER), OTHER, { kind: 'verdict', spam: true, at: 1 });
    t.newMail(m.header);
    await t.until(() => m.header.folder?.id === 'a/Junk');
    mail.splice(0, 1, lookalike);
    t.fire('messages.onUpdated', { ...m.header, junk: false }, { junk: false });
    await t.until(() => t.calls.filter((c) => c === 'raw:9:false').length === 4); // the first look and three more
    await new Promise((r) => setTimeout(r, 10));
    await t.settled();
    assert.equal((await t.store.verdict(accountOf(PROVIDER), OTHER))?.user, undefined);
    assert.equal((await t.store.verdict(accountOf(PROVIDER), PMF_ID))?.user, undefined);
    assert.deepEqual(acts(t.calls), ['update:7:{"junk":true}', 'move:7:a/Junk']);
  });

  it('Thunderbird’s own junk mail is not the add-on’s: a “Not Junk” on a message it found not spam changes nothing', async () => {
    const m = encrypted(7, `X-PMF-Message-Id: ${PMF_ID}\r\n`);
    const t = await setup([m], { spam: false });
    t.newMail(m.header);
    await t.until(async () => (await t.store.verdict(accountOf(PROVIDER), PMF_ID)) !== undefined);
    m.header.folder = { ...junkFolder }; // Thunderbird's own filter moved it
    m.header.junk = true;
    await t.api.messages.update(7, { junk: false });
    await t.settled();
    await new Promise((r) => setTimeout(r, 20));
    assert.equal((await t.store.verdict(accountOf(PROVIDER), PMF_ID))?.user, undefined);
    assert.equal(m.header.folder?.id, 'a/Junk');
  });

  it('a correction made while the provider was still being asked wins over the late verdict', async () => {
    const m = encrypted(7, `X-PMF-Message-Id: ${PMF_ID}\r\n`);
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const t = await setup([m], { gate });
    t.newMail(m.header);
    await t.until(() => t.requests.length === 1);
    // Checked before: the add-on moved it to Junk, the user took it back; now asked again by another device's answer.
    await t.store.putVerdict(accountOf(PROVIDER), PMF_ID, { kind: 'verdict', spam: true, at: 1 });
    await t.store.markByUser(accountOf(PROVIDER), PMF_ID, false);
    open();
    await t.until(async () => (await t.store.verdict(accountOf(PROVIDER), PMF_ID))?.at !== 1);
    await new Promise((r) => setTimeout(r, 20));
    await t.settled();
    assert.equal((await t.store.verdict(accountOf(PROVIDER), PMF_ID))?.user?.spam, false, 'the correction stays');
    assert.deepEqual(acts(t.calls), [], 'not moved');
  });
});

describe('Thunderbird: mail not checked yet (locked, closed, provider down) is found by a scan', () => {
  it('is checked at the scan after the unlock, once, and not again after a restart; nothing of it is stored', async () => {
    const mail = [1, 2, 3].map((i) => encrypted(i, `X-PMF-Message-Id: ${pmfId(i)}\r\n`));
    let locked = true;
    const t = await setup(mail, { decrypts: () => (locked ? 'locked' : true), spam: false });
    t.newMail(...mail.map((m) => m.header));
    await t.settled();
    assert.equal(t.requests.length, 0, 'nothing can be read while locked');
    locked = false;
    await t.watch.scan();
    await t.settled();
    assert.deepEqual(t.askedIds(), [1, 2, 3].map(pmfId));
    await new Promise((r) => setTimeout(r, 600)); // the scan's state is written a moment later
    assert.doesNotMatch(JSON.stringify(t.pending.data), /Cheap pills|BEGIN PGP/, 'never their content');
    // A restarted background (same storage, same IndexedDB): nothing left to check, nothing asked twice.
    const again = await setup(mail, { store: t.store, pending: t.pending });
    await again.watch.scan();
    await again.settled();
    assert.deepEqual(again.requests, []);
    assert.ok(!again.calls.some((c) => c.startsWith('raw:')), 'what was looked at is not even read again');
  });

  it('at most 8 in flight; a restart mid-way loses none and checks none twice', async () => {
    const mail = Array.from({ length: 12 }, (_, i) => encrypted(i + 1, `X-PMF-Message-Id: ${pmfId(i + 1)}\r\n`));
    let open!: () => void;
    const gate = new Promise<void>((r) => (open = r));
    const t = await setup(mail, { gate, spam: false });
    const running = t.watch.scan();
    await t.until(() => t.requests.length > 0);
    await new Promise((r) => setTimeout(r, 30));
    const offered = new Set(t.calls.filter((c) => c.startsWith('raw:')).map((c) => c.split(':')[1])).size;
    assert.equal(offered, 8, 'the backlog’s window: 8 messages read and waiting, the rest not yet');
    // The background restarts here: nothing answered yet.
    const after = await setup(mail, { store: t.store, pending: t.pending, spam: false });
    await after.watch.scan();
    await after.settled();
    open(); // the old worker's batch finishes too (it records before it reports)
    await running;
    await t.settled();
    const asked = [...t.requests, ...after.requests].flat().map((i) => i.messageId);
    assert.equal(new Set(asked).size, 12, 'every message checked');
    for (const i of mail.keys())
      assert.ok((await t.store.verdict(accountOf(PROVIDER), pmfId(i + 1))) !== undefined, `verdict ${i + 1} kept`);
  });

  it('locked again mid-way: it stops, and what is left is the next scan’s', async () => {
    const mail = [1, 2, 3].map((i) => encrypted(i, `X-PMF-Message-Id: ${pmfId(i)}\r\n`));
    let state: 'locked' | true = 'locked';
    const t = await setup(mail, { decrypts: () => state, spam: false });
    await t.watch.scan(); // still locked: nothing happens, nothing is lost
    await t.settled();
    assert.deepEqual(t.requests, []);
    state = true;
    await t.watch.scan();
    await t.settled();
    assert.equal(t.requests.flat().length, 3);
  });

  it('mail that came while Thunderbird was closed (no event at all) is found in each folder it was filed in; Junk is not scanned', async () => {
    const inWork = encrypted(2, `X-PMF-Message-Id: ${pmfId(2)}\r\n`);
    inWork.header.folder = { ...work };
    const inJunk = encrypted(3, `X-PMF-Message-Id: ${pmfId(3)}\r\n`);
    inJunk.header.folder = { ...junkFolder };
    const mail = [encrypted(1, `X-PMF-Message-Id: ${pmfId(1)}\r\n`), inWork, inJunk];
    const t = await setup(mail, { spam: false });
    await t.watch.scan();
    await t.settled();
    assert.deepEqual(t.askedIds(), [pmfId(1), pmfId(2)]);
    assert.ok(!t.calls.includes('query:a/Junk'), 'the Junk folder is not listed');
  });

  it('a folder whose message count grows is scanned by itself: Thunderbird fetching the mail that came while it was closed', async () => {
    const m = encrypted(1, `X-PMF-Message-Id: ${pmfId(1)}\r\n`);
    const t = await setup([m], { spam: false });
    t.fire('folders.onFolderInfoChanged', inbox, { totalMessageCount: 1 });
    await t.until(() => t.requests.length > 0);
    assert.deepEqual(
      t.requests.flat().map((i) => i.messageId),
      [pmfId(1)],
    );
    assert.ok(!t.calls.includes('query:a/Work'), 'only the folder that changed');
    t.fire('folders.onFolderInfoChanged', inbox, { totalMessageCount: 1 }); // read, not new: nothing to do
    await t.settled();
    assert.equal(t.calls.filter((c) => c === 'query:a/INBOX').length, 1);
  });

  it('Thunderbird’s “success” with nothing decrypted (a damaged message) spends no check, and is not read again', async () => {
    const damaged = encrypted(4, `X-PMF-Message-Id: ${pmfId(4)}\r\n`, {
      decryptionStatus: 'success',
      parts: [{ contentType: 'text/plain', body: ' ' }],
    });
    const t = await setup([damaged], { decrypts: false });
    t.newMail(damaged.header);
    await t.settled();
    await t.watch.scan();
    await t.settled();
    assert.deepEqual(t.requests, [], 'no check spent on empty input');
    assert.equal(
      t.calls.filter((c) => c === 'raw:4:false').length,
      1,
      'looked at once, by the event; the scan skips it',
    );
  });
});
