// The LMTP stage without Dovecot: stamping, bounds and answers, against a
// stand-in mail store (smtp-server in LMTP mode) that records what it got.
// The crash tests against a real Dovecot are in e2e/lmtp.e2e.ts.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { messageIdOf, PROVIDER_ID } from '../../mail/message-id.js';
import { lmtpConfig, LMTP_DEFAULTS, type LmtpConfig } from '../src/lmtp/config.js';
import { DeliveryJournal, deliveryKey } from '../src/lmtp/journal.js';
import { lmtpSend } from '../src/lmtp/lmtp-client.js';
import { storeRegistry } from '../src/lmtp/registry.js';
import { startLmtpStage, type LmtpStage } from '../src/lmtp/stage.js';
import { StampRefused, stampProviderId } from '../src/lmtp/stamp.js';
import type { Store } from '../src/store.js';
import { openSqliteStore } from '../src/store-sqlite.js';
import { startFakeMailStore, type FakeMailStore } from './fake-mail-store.js';

const ID = 'pmf-0123456789abcdef0123456789abcdef';

describe('stampProviderId', () => {
  it('removes every sender copy (any case, folded) and puts the id on top; the body is unchanged, byte for byte', () => {
    const body = Buffer.from([0x68, 0xe9, 0x0d, 0x0a, 0xff, 0x00, 0x0d, 0x0a]); // 8-bit, not UTF-8
    const raw = Buffer.concat([
      Buffer.from(
        'Received: by mta\r\nx-pmf-message-id: pmf-ffffffffffffffffffffffffffffffff\r\nSubject: s\r\n' +
          'X-Pmf-Message-ID:\r\n pmf-eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee\r\nFrom: b@x\r\n\r\n',
      ),
      body,
    ]);
    const out = stampProviderId(raw, ID);
    assert.equal(
      out.subarray(0, out.length - body.length).toString('latin1'),
      `X-PMF-Message-Id: ${ID}\r\nReceived: by mta\r\nSubject: s\r\nFrom: b@x\r\n\r\n`,
    );
    assert.deepEqual(out.subarray(out.length - body.length), body);
    assert.equal(messageIdOf(out.toString('latin1'), 'f'), ID);
  });

  it('keeps the message’s line endings', () => {
    assert.equal(
      stampProviderId(Buffer.from('Subject: s\n\nb\n'), ID).toString(),
      `X-PMF-Message-Id: ${ID}\nSubject: s\n\nb\n`,
    );
  });

  it('refuses a copy hidden after a line some readers take for a header', () => {
    const raw = Buffer.from(
      'Subject: s\r\nnot a header\r\nX-PMF-Message-Id: pmf-ffffffffffffffffffffffffffffffff\r\n\r\nb',
    );
    assert.throws(() => stampProviderId(raw, ID), StampRefused);
    // A space before the colon (obsolete syntax, RFC 5322 §4.5.3) ends our header block, not every reader's.
    assert.throws(
      () => stampProviderId(Buffer.from('Subject: s\r\nX-PMF-Message-Id : pmf-1\r\n\r\nb'), ID),
      StampRefused,
    );
    // In the body it is text, not a header.
    assert.doesNotThrow(() => stampProviderId(Buffer.from('Subject: s\r\n\r\nX-PMF-Message-Id: x\r\n'), ID));
  });
});

describe('DeliveryJournal', () => {
  it('gives a retry of the same delivery the same id until it is forgotten or too old', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-journal-'));
    const journal = new DeliveryJournal(path.join(dir, 'journal.db'));
    try {
      const key = deliveryKey('Alice@example.org', Buffer.from('Received: q1\r\n\r\nb'));
      const first = journal.begin(key);
      assert.match(first.id, PROVIDER_ID);
      assert.equal(first.fresh, true);
      assert.deepEqual(
        journal.begin(deliveryKey('alice@example.org', Buffer.from('Received: q1\r\n\r\nb'))),
        { ...first, fresh: false },
        'a retry: not fresh, so it may have reached Dovecot',
      );
      assert.notEqual(
        journal.begin(deliveryKey('alice@example.org', Buffer.from('Received: q2\r\n\r\nb'))).id,
        first.id,
      );
      journal.markRelayed(key);
      assert.deepEqual(journal.begin(key), { id: first.id, relayed: true, fresh: false });
      journal.forget(key);
      assert.notEqual(journal.begin(key).id, first.id);
      const kept = journal.begin(key);
      journal.prune(Date.now() + 6 * 24 * 3600_000);
      assert.deepEqual(journal.begin(key), kept);
      journal.prune(Date.now() + 8 * 24 * 3600_000);
      assert.notEqual(journal.begin(key).id, kept.id);
    } finally {
      journal.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('lmtpConfig', () => {
  it('listens on loopback only and checks every bound', () => {
    assert.deepEqual(lmtpConfig(undefined, {}), LMTP_DEFAULTS);
    assert.throws(() => lmtpConfig({ host: '0.0.0.0' }, {}), /loopback/);
    assert.throws(() => lmtpConfig({ maxRecipients: 0 }, {}), /maxRecipients/);
    assert.throws(() => lmtpConfig({ maxMessageBytes: 1e12 }, {}), /maxMessageBytes/);
    assert.throws(() => lmtpConfig({ userName: '%u' }, {}), /userName/);
    assert.throws(() => lmtpConfig({}, { PMF_LMTP_RELAY: 'dovecot' }), /host:port/);
    const check = { masterUser: 'pmf-stage', passwordFile: '/etc/pmf/master-password' };
    assert.deepEqual(lmtpConfig({ storedCheck: check }, {}).storedCheck, {
      host: '127.0.0.1',
      port: 143,
      timeoutMs: 10_000,
      ...check,
    });
    assert.throws(() => lmtpConfig({ storedCheck: { ...check, host: '192.0.2.1' } }, {}), /loopback/);
    assert.throws(() => lmtpConfig({ storedCheck: { ...check, passwordFile: 'pw' } }, {}), /absolute/);
    assert.throws(() => lmtpConfig({ storedCheck: { ...check, masterUser: 'a*b' } }, {}), /master user/);
    const c = lmtpConfig({ relay: { timeoutMs: 5000 } }, { PMF_LMTP_PORT: '2525', PMF_LMTP_RELAY: '[::1]:10024' });
    assert.deepEqual([c.port, c.relay], [2525, { host: '::1', port: 10024, timeoutMs: 5000 }]);
  });
});

describe('storeRegistry', () => {
  it('registers a message once when the same delivery is registered twice at once (a retry racing the first try, or two stages)', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-registry-'));
    const store = openSqliteStore(path.join(dir, 'store.db'));
    try {
      const { userId } = await store.addUser('alice@example.org');
      const registry = storeRegistry(store);
      const raw = Buffer.from('Subject: twice\r\n\r\nb\r\n');
      const both = await Promise.allSettled([0, 1].map(() => registry.register('alice@example.org', ID, raw)));
      assert.deepEqual(
        both.map((r) => r.status),
        ['fulfilled', 'fulfilled'],
        JSON.stringify(both),
      );
      assert.deepEqual(
        (await store.listMessages(userId)).map((m) => m.id),
        [ID],
      );
      await registry.register('alice@example.org', ID, raw); // a later retry
      assert.equal((await store.listMessages(userId)).length, 1);
    } finally {
      await store.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the LMTP stage', () => {
  let dir: string;
  let store: Store;
  let journal: DeliveryJournal;
  let stage: LmtpStage;
  let fake: FakeMailStore;
  const config = (over: Partial<LmtpConfig> = {}): LmtpConfig => ({
    ...LMTP_DEFAULTS,
    port: 0,
    relay: { host: '127.0.0.1', port: fake.port, timeoutMs: 5_000 },
    maxMessageBytes: 64 * 1024,
    maxRecipients: 3,
    maxConnections: 2,
    timeoutMs: 5_000,
    ...over,
  });
  const send = (to: string[], data: string | Buffer) =>
    lmtpSend(
      { host: '127.0.0.1', port: stage.port, timeoutMs: 10_000 },
      { from: 'bob@example.org', to, data: Buffer.from(data) },
    );

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-lmtp-'));
    store = openSqliteStore(path.join(dir, 'store.db'));
    await store.addUser('alice');
    journal = new DeliveryJournal(path.join(dir, 'journal.db'));
    fake = await startFakeMailStore();
    stage = await startLmtpStage({ config: config(), journal, registry: storeRegistry(store) });
  });

  after(async () => {
    await stage.close();
    await fake.close();
    journal.close();
    await store.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('answers each recipient with the mail store’s answer; registers only the provider’s users', async () => {
    fake.stored.length = 0;
    fake.answer = (to) =>
      to.startsWith('nobody') ? Object.assign(new Error('5.1.1 no such user'), { responseCode: 550 }) : undefined;
    const msg = 'Subject: to three\r\n\r\nline\r\n.\r\n..two dots\r\n.\r\n';
    const r = await send(['alice@example.org', 'carol@example.org', 'nobody@example.org'], msg);
    assert.deepEqual(
      r.data.map((d) => d?.code),
      [250, 250, 550],
    );
    assert.match(r.data[2]!.text, /no such user/);
    assert.deepEqual(
      fake.stored.map((s) => s.to),
      ['alice@example.org', 'carol@example.org'],
    );
    for (const s of fake.stored)
      assert.ok(s.raw.toString().endsWith('\r\n\r\nline\r\n.\r\n..two dots\r\n.\r\n'), 'dot-stuffed on the way');
    const [alice, carol] = fake.stored.map((s) => messageIdOf(s.raw.toString(), ''));
    assert.match(alice, PROVIDER_ID);
    assert.match(carol, PROVIDER_ID);
    assert.notEqual(alice, carol, 'one id per recipient');
    const aliceId = (await store.userId('alice'))!;
    assert.deepEqual(
      (await store.listMessages(aliceId)).map((m) => m.id),
      [alice],
      'carol is not a user of the provider: relayed, not registered',
    );
    assert.deepEqual(
      await store.getMessage(aliceId, alice),
      { bytes: fake.stored[0].raw.length },
      'Dovecot holds the message: its id and size are registered, not the message',
    );
  });

  it('keeps the stamped message for the demo webmail when told to (lmtp.keepBodies)', async () => {
    fake.stored.length = 0;
    fake.answer = () => undefined;
    const keeping = await startLmtpStage({
      config: config({ keepBodies: true }),
      journal,
      registry: storeRegistry(store, { keepBodies: true }),
    });
    try {
      const r = await lmtpSend(
        { host: '127.0.0.1', port: keeping.port, timeoutMs: 10_000 },
        { from: '', to: ['alice@example.org'], data: Buffer.from('Subject: kept\r\n\r\nbody\r\n') },
      );
      assert.equal(r.data[0]?.code, 250);
      const id = messageIdOf(fake.stored[0].raw.toString(), '');
      const kept = await store.getMessage((await store.userId('alice'))!, id);
      assert.equal(kept?.raw, fake.stored[0].raw.toString());
    } finally {
      await keeping.close();
    }
  });

  it('refuses a message over the size limit for every recipient, before relaying or registering anything', async () => {
    fake.stored.length = 0;
    const before = (await store.listMessages((await store.userId('alice'))!)).length;
    const r = await send(
      ['alice@example.org', 'carol@example.org'],
      `Subject: big\r\n\r\n${'x'.repeat(70 * 1024)}\r\n`,
    );
    assert.deepEqual(
      r.data.map((d) => d?.code),
      [552, 552],
    );
    assert.equal(fake.stored.length, 0);
    assert.equal((await store.listMessages((await store.userId('alice'))!)).length, before);
  });

  it('takes at most maxRecipients recipients', async () => {
    const r = await send(['a@x', 'b@x', 'c@x', 'd@x'], 'Subject: many\r\n\r\nb\r\n');
    assert.deepEqual(
      r.rcpt.map((x) => x.code),
      [250, 250, 250, 452],
    );
  });

  it('defers (451) when the mail store is down; a refused sender (550) and a refused stamp (554) are permanent', async () => {
    const down = await startLmtpStage({
      config: config({ relay: { host: '127.0.0.1', port: 1, timeoutMs: 2_000 } }),
      journal,
      registry: storeRegistry(store),
    });
    try {
      const r = await lmtpSend(
        { host: '127.0.0.1', port: down.port, timeoutMs: 10_000 },
        { from: '', to: ['alice@example.org'], data: Buffer.from('Subject: later\r\n\r\nb\r\n') },
      );
      assert.equal(r.data[0]?.code, 451);
    } finally {
      await down.close();
    }
    const refused = await lmtpSend(
      { host: '127.0.0.1', port: stage.port, timeoutMs: 10_000 },
      { from: 'refused@example.org', to: ['alice@example.org'], data: Buffer.from('Subject: no\r\n\r\nb\r\n') },
    );
    assert.deepEqual([refused.data[0]?.code, refused.data[0]?.text], [550, '5.7.1 sender refused'], 'passed on as is');
    const hidden = await send(
      ['alice@example.org'],
      'Subject: s\r\nnot a header\r\nX-PMF-Message-Id: pmf-1\r\n\r\nb\r\n',
    );
    assert.equal(hidden.data[0]?.code, 554);
  });

  it('holds at most maxConnections connections', async () => {
    const fresh = await startLmtpStage({ config: config(), journal, registry: storeRegistry(store) }); // none open yet
    const sockets = [0, 1, 2].map(() => net.connect(fresh.port, '127.0.0.1'));
    try {
      const greetings = await Promise.all(
        sockets.map((s) => new Promise<string>((resolve) => s.once('data', (d) => resolve(d.toString())))),
      );
      assert.deepEqual(greetings.map((g) => g.slice(0, 3)).sort(), ['220', '220', '421']);
    } finally {
      for (const s of sockets) s.destroy();
      await fresh.close();
    }
  });
});
