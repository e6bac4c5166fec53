import assert from 'node:assert/strict';
import { afterEach, before, describe, it } from 'node:test';
import { decryptBlock, type DecryptResult } from '../lib/decrypt.js';
import type { MailSource } from '../lib/messages.js';
import { describeDisplayedMessage, indexThunderbirdMail, PARTIAL_TEXT } from '../thunderbird/displayed-message.js';
import { watchMail } from '../thunderbird/live-index.js';
import { tone } from '../thunderbird/report-view.js';
import { fakeMessenger, header, type FakeMail } from './fake-messenger.js';
import {
  encryptText,
  inlinePgpMessage,
  makeParty,
  partlySignedMessage,
  pgpMimeMessage,
  type Party,
} from './mail-fixtures.js';

let alice: Party, bob: Party;
before(async () => {
  [alice, bob] = await Promise.all([makeParty('Alice', 'alice@example.org'), makeParty('Bob', 'bob@example.org')]);
});

/** Installs a fake `messenger` (checked against the real schemas by tb-schema.test.ts). */
function install(opts: Parameters<typeof fakeMessenger>[0]) {
  const fake = fakeMessenger(opts);
  (globalThis as { messenger?: unknown }).messenger = fake.api;
  return fake;
}
afterEach(() => delete (globalThis as { messenger?: unknown }).messenger);

const mail = (id: number, raw: string, full?: FakeMail['full']): FakeMail => ({ header: header(id), raw, full });

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
      index: async (source: MailSource, text: string, subject: string) =>
        void indexed.push([{ ...source, subject }, text]),
    },
  };
}

/** Bob's signed and encrypted block inside a message an attacker wrote around it. */
async function partlySigned(shape: 'mixed' | 'prefix' | 'two-blocks'): Promise<string> {
  const block = await encryptText('I approve the transfer.', [alice], bob);
  const head =
    'From: Bob <bob@example.org>\r\nTo: Alice <alice@example.org>\r\nSubject: Transfer\r\nMIME-Version: 1.0\r\n';
  const attacker = 'Use the new account number IBAN XX00 6666 for the transfer.';
  if (shape === 'prefix') return `${head}Content-Type: text/plain\r\n\r\n${attacker}\r\n\r\n${block}`;
  if (shape === 'two-blocks') return `${head}Content-Type: text/plain\r\n\r\n${block}\r\n${block}`;
  return partlySignedMessage(bob, alice, 'Transfer', 'I approve the transfer.', attacker);
}

describe('Thunderbird displayed message', () => {
  it('says "partly signed" and never shows green when the OpenPGP block is not the whole message', async () => {
    for (const shape of ['mixed', 'prefix', 'two-blocks'] as const) {
      const fake = install({ mail: [mail(7, await partlySigned(shape))], displayed: 7 });
      const r = await describeDisplayedMessage(3, deps('alice').deps);
      // Outside the message, where its HTML cannot draw: the toolbar button of tab 3.
      assert.equal(fake.toolbar.get(3)?.text, '!', shape);
      assert.match(fake.toolbar.get(3)?.title ?? '', /^OpenPGP: Partly encrypted or signed/, shape);
      assert.equal(r.result?.signature.status, 'valid', shape);
      assert.equal(r.partial, true, shape);
      assert.ok(r.summary.startsWith(PARTIAL_TEXT), shape);
      assert.equal(r.text, 'I approve the transfer.', `${shape}: the checked part is shown`);
      assert.equal(tone(r), 'warn', shape);
      delete (globalThis as { messenger?: unknown }).messenger;
    }
    // A PGP/MIME root and a whole inline body are the whole message: green.
    for (const raw of [
      await pgpMimeMessage(bob, alice, 'Budget', 'approved'),
      await inlinePgpMessage(bob, alice, 'Hi', 'hello from bob'),
    ]) {
      const fake = install({ mail: [mail(7, raw)], displayed: 7 });
      const r = await describeDisplayedMessage(3, deps('alice').deps);
      assert.equal(r.partial, undefined);
      assert.equal(tone(r), 'ok');
      assert.equal(fake.toolbar.get(3)?.text, '✓');
      delete (globalThis as { messenger?: unknown }).messenger;
    }
  });

  it('decrypts the raw (still encrypted) message with our keys and verifies the signature', async () => {
    const fake = install({ mail: [mail(7, await inlinePgpMessage(bob, alice, 'Hi', 'hello from bob'))], displayed: 7 });
    const d = deps('alice');
    const r = await describeDisplayedMessage(3, d.deps);
    assert.equal(r.path, 'extension');
    assert.equal(r.text, 'hello from bob');
    assert.equal(r.result?.signature.status, 'valid');
    assert.deepEqual(fake.calls, ['displayed:3', 'raw:7:false']);
    assert.equal(d.decrypted[0].id, 'thunderbird:m7@example.org');
    assert.equal(d.decrypted[0].date, '2026-11-21T10:00:00.000Z');
  });

  it("uses Thunderbird's own decryption when the extension lacks the key, and indexes its plaintext", async () => {
    const full = {
      decryptionStatus: 'success' as const,
      contentType: 'multipart/mixed',
      parts: [
        {
          contentType: 'multipart/alternative',
          headers: { subject: ['The protected subject'] },
          parts: [
            { contentType: 'text/plain', body: 'decrypted by TB' },
            { contentType: 'text/html', body: '<p>decrypted by <b>TB</b></p>' },
          ],
        },
        { contentType: 'text/html', body: '<p>and <b>html</b></p>' },
      ],
    };
    install({ mail: [mail(7, await inlinePgpMessage(bob, alice, 'Hi', 'secret'), full)], displayed: 7 });
    const d = deps('none');
    const r = await describeDisplayedMessage(3, d.deps);
    assert.equal(r.path, 'thunderbird');
    assert.equal(r.subject, 'The protected subject');
    assert.equal(r.result?.status, 'not-for-this-key');
    assert.equal(r.text, 'decrypted by TB\nand html');
    assert.match(r.summary, /Thunderbird's own OpenPGP/);
    // Thunderbird reports no signature status to add-ons: no claim either way, and not shown green.
    assert.match(r.summary, /Signature not checked by the add-on/);
    assert.equal(tone(r), 'warn');
    assert.deepEqual(
      d.indexed.map(([source, text]) => [source.subject, text]),
      [['The protected subject', 'decrypted by TB\nand html']],
      'indexed under its protected subject: the search page lists it so',
    );
    assert.equal(r.listedSubject, 'm7', 'the list shows the outer subject');
  });

  it('a “success” from Thunderbird with nothing decrypted is a damaged message: red, no claim about keys, nothing indexed', async () => {
    // What Thunderbird 153 hands add-ons for a damaged inline message: "success" and a text part of one space.
    const full = { decryptionStatus: 'success' as const, parts: [{ contentType: 'text/plain', body: ' ' }] };
    const raw =
      'From: Bob <bob@example.org>\r\nSubject: x\r\n\r\n-----BEGIN PGP MESSAGE-----\r\n\r\nhQEMA+garbage\r\n-----END PGP MESSAGE-----\r\n';
    install({ mail: [mail(9, raw, full)], displayed: 9 });
    const d = deps('none');
    const r = await describeDisplayedMessage(3, d.deps);
    assert.equal(r.path, 'none');
    assert.equal(r.damaged, true);
    assert.match(r.summary, /could not be read: it is damaged or incomplete/);
    assert.doesNotMatch(r.summary, /Decrypted|holds your key/);
    assert.equal(tone(r), 'error');
    assert.deepEqual(d.indexed, []);
  });

  it('lists the attachments the add-on decrypted, and says what the spam check found', async () => {
    install({ mail: [mail(5, await pgpMimeMessage(bob, alice, 'Budget', 'See the report.'))], displayed: 5 });
    const d = deps('alice');
    const r = await describeDisplayedMessage(3, {
      ...d.deps,
      spamLines: async (_raw, inJunk) => [inJunk ? 'in junk' : 'not in junk'],
    });
    assert.equal(r.subject, 'Budget');
    assert.equal(r.listedSubject, 'm5');
    assert.deepEqual(r.attachments, [{ name: 'report.pdf', type: 'application/pdf', size: 9 }]);
    assert.deepEqual(r.spam, ['not in junk']);
  });

  it('reports plain mail as such and undecryptable mail without indexing anything', async () => {
    install({ mail: [mail(1, 'From: x\r\n\r\nplain text')], displayed: 1 });
    const d = deps('alice');
    const plain = await describeDisplayedMessage(1, d.deps);
    assert.equal(plain.path, 'plain');
    assert.match(plain.summary, /not encrypted or signed/);

    const raw = await inlinePgpMessage(bob, alice, 'Hi', 'x');
    install({ mail: [mail(1, raw, { decryptionStatus: 'fail' })], displayed: 1 });
    const locked = deps('none');
    const failed = await describeDisplayedMessage(1, locked.deps);
    assert.equal(failed.path, 'none');
    assert.equal(failed.result?.status, 'not-for-this-key');
    assert.deepEqual([...d.indexed, ...locked.indexed], []);
  });

  it('says to select a message when none is displayed', async () => {
    install({});
    await assert.rejects(describeDisplayedMessage(1, deps('none').deps), /Select a message/);
  });
});

describe('Thunderbird mailbox indexing', () => {
  it('lists every page of messages first, then decrypts and indexes each with progress', async () => {
    install({
      pageSize: 2,
      mail: [
        mail(0, await inlinePgpMessage(bob, alice, 'One', 'first secret')),
        mail(1, 'From: x\r\n\r\nplain'),
        mail(2, await inlinePgpMessage(bob, alice, 'Two', 'second secret')),
      ],
    });
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

/** An in-memory storage area. */
function memoryArea() {
  const data: Record<string, unknown> = {};
  return {
    data,
    get: async (key: string) => (key in data ? { [key]: data[key] } : {}),
    set: async (items: Record<string, unknown>) => void Object.assign(data, items),
  };
}

/** Polls until cond holds (the listeners work through a queue). */
async function until(cond: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !cond(); i++) await new Promise((r) => setTimeout(r, 20));
  assert.ok(cond(), 'timed out');
}

describe('Thunderbird new mail, moves and deletions', () => {
  const list = (...ids: number[]) => ({ id: null, messages: ids.map((id) => header(id)) });
  async function setup() {
    const fake = install({
      mail: [
        mail(1, await inlinePgpMessage(bob, alice, 'New', 'fresh secret')),
        mail(2, await inlinePgpMessage(bob, alice, 'From Junk', 'rescued secret')),
      ],
    });
    const d = deps('alice');
    const removed: string[] = [];
    const index = {
      open: true,
      isOpen: async () => index.open,
      has: async (id: string) => d.decrypted.some((s) => s.id === id),
      remove: async (id: string) => removed.push(id),
    };
    const area = memoryArea();
    const catchUp = watchMail(fake.api, d.deps, index, area);
    const fire = (name: string, ...args: unknown[]) =>
      fake.listeners[name].forEach((l) => (l as (...a: unknown[]) => void)(...args));
    return { d, removed, index, area, catchUp, fire };
  }

  it('indexes new and moved mail and drops deleted mail from the index, without a click', async () => {
    const { d, removed, fire } = await setup();
    fire('messages.onNewMailReceived', {}, list(1));
    fire('messages.onMoved', list(2), list(2));
    fire('messages.onDeleted', list(1));
    await until(() => removed.length === 1);
    assert.deepEqual(
      d.decrypted.map((s) => s.subject),
      ['m1', 'm2'],
    );
    assert.deepEqual(removed, ['thunderbird:m1@example.org']);
  });

  it('indexes mail no event announced (it came while Thunderbird was closed) at the start, once', async () => {
    const inbox = { id: 'a/INBOX', accountId: 'a', specialUse: ['inbox'] };
    const fake = install({
      mail: [
        {
          header: header(3, { date: new Date(), folder: inbox }),
          raw: await inlinePgpMessage(bob, alice, 'Closed', 'came while closed'),
        },
      ],
      folders: [inbox],
    });
    const d = deps('alice');
    const indexedIds = new Set<string>();
    const area = memoryArea();
    const target = {
      isOpen: async () => true,
      has: async (id: string) => indexedIds.has(id),
      remove: async () => 0,
    };
    const catchUp = watchMail(
      fake.api,
      { ...d.deps, decrypt: async (b, src) => (indexedIds.add(src.id), d.deps.decrypt(b, src)) },
      target,
      area,
    );
    catchUp();
    await until(() => d.decrypted.length === 1);
    assert.equal(d.decrypted[0].id, 'thunderbird:m3@example.org');
    catchUp(); // a second start: looked at already, not read again
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(d.decrypted.length, 1);
  });

  it('keeps the ids of mail that arrives while locked and indexes it after the unlock', async () => {
    const { d, index, area, catchUp, fire } = await setup();
    index.open = false;
    fire('messages.onNewMailReceived', {}, list(1, 2));
    await until(() => (area.data['pmf-tb-pending'] as number[] | undefined)?.length === 2);
    assert.deepEqual(d.decrypted, [], 'nothing decrypted while locked');
    index.open = true;
    catchUp();
    await until(() => d.decrypted.length === 2);
    assert.deepEqual(area.data['pmf-tb-pending'], []);
  });

  it('drops mail deleted while locked from the index after the unlock, before indexing what came meanwhile', async () => {
    const { d, removed, index, area, catchUp, fire } = await setup();
    index.open = false;
    fire('messages.onDeleted', list(1, 2));
    fire('messages.onDeleted', list(1));
    await until(() => (area.data['pmf-tb-deleted'] as string[] | undefined)?.length === 2);
    assert.deepEqual(removed, [], 'nothing removed while locked');
    fire('messages.onNewMailReceived', {}, list(1)); // delivered again
    index.open = true;
    catchUp();
    await until(() => d.decrypted.length === 1);
    assert.deepEqual(removed, ['thunderbird:m2@example.org', 'thunderbird:m1@example.org']);
    assert.deepEqual(area.data['pmf-tb-deleted'], []);
    assert.equal(d.decrypted[0].id, 'thunderbird:m1@example.org', 'the copy delivered again is indexed after');
  });

  it('keeps at most 4 MiB of Message-IDs deleted while locked, the newest', async () => {
    const { index, area, fire } = await setup();
    index.open = false;
    const long = (id: number) => header(id, { headerMessageId: `${id}@${'x'.repeat(1 << 20)}` });
    for (let id = 1; id <= 6; id++) fire('messages.onDeleted', { id: null, messages: [long(id)] });
    await until(() => ((area.data['pmf-tb-deleted'] as string[] | undefined) ?? []).some((m) => m.includes('6@')));
    const kept = (area.data['pmf-tb-deleted'] as string[]).map((m) => m.slice(0, m.indexOf('@')));
    assert.deepEqual(kept, ['thunderbird:4', 'thunderbird:5', 'thunderbird:6']);
  });
});
