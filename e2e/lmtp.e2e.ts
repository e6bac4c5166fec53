// The provider's LMTP stage between an MTA and a real Dovecot:
// the test is the MTA (it speaks LMTP to the stage, which runs as its own
// process, `provider-server lmtp`, with its IMAP check of retries on), the
// stage relays through a TCP gate to Dovecot's LMTP, and every outcome is
// read back over IMAP (imapflow) and from the provider's store. Each side is
// killed mid-delivery at a point the gate holds, and the MTA's retry must
// leave exactly one copy, registered once under the id the provider assigned. Last, the Message-ID reuse
// attack, classified by the headless client against a real provider.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { main as clientCli } from '../client/node/cli.js';
import { PROVIDER_ID } from '../mail/message-id.js';
import { lmtpSend, type Reply } from '../provider-server/src/lmtp/lmtp-client.js';
import { openStore } from '../provider-server/src/provider.js';
import { startLmtpStage, type RunningStage } from './fixtures/lmtp-stage.js';
import { dovecotInstalled, startDovecot, type Dovecot } from './fixtures/dovecot.js';
import { freePort } from './fixtures/process.js';
import { startGate, type Gate } from './fixtures/tcp-gate.js';
import { startLoopbackProvider } from './fixtures/provider.js';

const skip = !dovecotInstalled()
  ? 'Dovecot is not installed: run scripts/setup.sh'
  : process.getuid?.() !== 0
    ? 'needs root: the test Dovecot runs as the user nobody'
    : false;

let dir: string;
let dovecot: Dovecot;
let toDovecot: Gate; // stage → Dovecot
let toStage: Gate; // MTA → stage
let stage: RunningStage;
let n = 0;

const dataDir = () => path.join(dir, 'provider');

async function until<T>(what: string, f: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
    const v = await f();
    if (v !== undefined) return v;
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A message as the MTA hands it over: its own Received line makes each queued message unique. */
function message(subject: string, extraHeaders = '', body = 'first half\r\nMIDDLE\r\nsecond half\r\n'): Buffer {
  return Buffer.from(
    `Received: from mx.example.org by mta.example.org with ESMTP id Q${n++}${Date.now()}\r\n` +
      `From: bob@example.org\r\nTo: alice@example.org\r\nSubject: ${subject}\r\n${extraHeaders}\r\n${body}`,
  );
}

/** The MTA: one delivery to alice through the gate in front of the stage; the DATA (or RCPT) reply, or the failure. */
async function send(data: Buffer): Promise<Reply | Error> {
  try {
    const r = await lmtpSend(
      { host: '127.0.0.1', port: toStage.port, timeoutMs: 30_000 },
      { from: 'bob@example.org', to: ['alice@example.org'], data },
    );
    return r.data[0] ?? r.rcpt[0];
  } catch (e) {
    return e as Error;
  }
}

/** The provider id of each of alice's INBOX messages with this subject, read over IMAP ("a,b" if it has two). */
async function inbox(subject: string): Promise<string[]> {
  const imap = await dovecot.imap('alice');
  try {
    const lock = await imap.getMailboxLock('INBOX');
    try {
      const ids: string[] = [];
      for await (const m of imap.fetch('1:*', { headers: ['subject', 'x-pmf-message-id'] })) {
        const head = m.headers!.toString();
        if (head.split(/\r?\n/).includes(`Subject: ${subject}`))
          ids.push([...head.matchAll(/^X-PMF-Message-Id:\s*(\S+)/gim)].map((h) => h[1]).join(',') || 'none');
      }
      return ids;
    } finally {
      lock.release();
    }
  } finally {
    await imap.logout();
  }
}

/** Alice's message ids the tests have seen registered (the store keeps ids, not the messages). */
const seen = new Set<string>();

/** Message ids registered for alice in the provider's store since the last call. */
async function newlyRegistered(): Promise<string[]> {
  const store = await openStore({ dataDir: dataDir() });
  try {
    const alice = (await store.userId('alice'))!;
    const fresh = (await store.listMessages(alice)).map((m) => m.id).filter((id) => !seen.has(id));
    for (const id of fresh) seen.add(id);
    return fresh;
  } finally {
    await store.close();
  }
}

before(
  async () => {
    if (skip) return;
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-lmtp-'));
    fs.chmodSync(dir, 0o755); // Dovecot runs as nobody
    dovecot = await startDovecot(path.join(dir, 'dovecot'), { alice: 'imap-secret' });
    toDovecot = await startGate(dovecot.lmtpPort);
    const port = await freePort();
    toStage = await startGate(port);
    const store = await openStore({ dataDir: dataDir() });
    await store.addUser('alice');
    await store.close();
    stage = await startLmtpStage({
      dir,
      dataDir: dataDir(),
      port,
      relayPort: toDovecot.port,
      storedCheck: { port: dovecot.port, masterUser: dovecot.master.user, passwordFile: dovecot.master.passwordFile },
    });
  },
  { timeout: 60_000 },
);

after(async () => {
  await stage?.stop();
  await toStage?.close();
  await toDovecot?.close();
  await dovecot?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('the LMTP stage in front of a real Dovecot', { skip, timeout: 120_000 }, () => {
  it('stamps its own id over a sender’s, registers the message and Dovecot stores it once', async () => {
    const forged = 'pmf-00000000000000000000000000000000';
    const data = message('Stamped', `X-PMF-Message-Id: ${forged}\r\nx-pmf-message-id:\r\n ${forged}\r\n`);
    const reply = await send(data);
    assert.ok(!(reply instanceof Error) && reply.code === 250, String(reply instanceof Error ? reply : reply.text));
    const [id, ...more] = await inbox('Stamped');
    assert.deepEqual(more, [], 'one copy');
    assert.match(id, PROVIDER_ID);
    assert.notEqual(id, forged);
    assert.deepEqual(await newlyRegistered(), [id]);
    // The MTA did not hear the answer and sends the same queued message again.
    const again = await send(data);
    assert.ok(!(again instanceof Error) && again.code === 250);
    assert.deepEqual(await inbox('Stamped'), [id], 'a retry is not delivered twice');
    assert.deepEqual(await newlyRegistered(), [], 'nor registered twice');
  });

  it('Dovecot killed mid-message: the recipient is deferred, and the retry delivers it once', async () => {
    const data = message('Dovecot crash');
    const held = toDovecot.holdAfter('up', 'MIDDLE');
    const sending = send(data);
    await held; // Dovecot has half the message
    await dovecot.kill();
    const reply = await sending;
    assert.ok(!(reply instanceof Error), String(reply));
    assert.equal(reply.code, 451, 'deferred, so the MTA keeps it queued');
    const [id, ...more] = await newlyRegistered();
    assert.deepEqual(more, []);
    assert.match(id, PROVIDER_ID, 'registered before the relay');
    await dovecot.restart();
    assert.deepEqual(await inbox('Dovecot crash'), [], 'nothing stored by the killed delivery');
    const retry = await send(data);
    assert.ok(!(retry instanceof Error) && retry.code === 250);
    assert.deepEqual(await inbox('Dovecot crash'), [id], 'stored once, under the id registered first');
    assert.deepEqual(await newlyRegistered(), []);
  });

  it('the stage killed while relaying: nothing is stored, and the retry delivers it once', async () => {
    const data = message('Stage crash while relaying');
    const held = toDovecot.holdAfter('up', 'MIDDLE');
    const sending = send(data);
    await held;
    await stage.kill();
    assert.ok((await sending) instanceof Error, 'the MTA saw the connection break');
    await stage.restart();
    assert.deepEqual(await inbox('Stage crash while relaying'), []);
    const retry = await send(data);
    assert.ok(!(retry instanceof Error) && retry.code === 250);
    const ids = await inbox('Stage crash while relaying');
    assert.equal(ids.length, 1);
    assert.deepEqual(await newlyRegistered(), ids);
  });

  /**
   * Holds the delivery in `gate` once Dovecot has the message, kills the stage
   * before the MTA hears anything, restarts it, and retries: one copy, registered once.
   */
  async function killAfterStoredThenRetry(subject: string, gate: Gate, why: string): Promise<void> {
    const data = message(subject);
    const held = gate.holdAfter('down', '354');
    const sending = send(data);
    await held;
    const [id] = await until('the message in Dovecot', async () => {
      const ids = await inbox(subject);
      return ids.length ? ids : undefined;
    });
    await stage.kill();
    assert.ok((await sending) instanceof Error, 'the MTA never got an answer');
    await stage.restart();
    const retry = await send(data);
    assert.ok(!(retry instanceof Error) && retry.code === 250);
    assert.deepEqual(await inbox(subject), [id], why);
    assert.deepEqual(await newlyRegistered(), [id]);
  }

  it('the stage killed after Dovecot accepted, before the MTA heard: the retry is not stored again', () =>
    // the stage's answer to the MTA waits in the gate
    killAfterStoredThenRetry('Stage crash before the answer', toStage, 'one copy'));

  it('Dovecot stored it but its answer died with the stage (RFC 1047): the retry asks Dovecot and is not stored again', () =>
    // Dovecot's answer after the message waits in the gate
    killAfterStoredThenRetry('Answer lost', toDovecot, 'one copy: Dovecot said over IMAP it holds that id'));
});

describe('a sender reusing an earlier Message-ID', { skip, timeout: 300_000 }, () => {
  it('does not make new mail "already classified": the verdict keys on the provider’s id', async () => {
    const provider = await startLoopbackProvider(dataDir());
    try {
      const alice = (await provider.store.userId('alice'))!;
      const token = await provider.store.issueToken(alice);
      const reused = 'Message-ID: <weekly-report@example.org>\r\n';
      for (const [subject, body] of [
        ['Weekly report', 'The figures for this week are attached to the shared folder.\r\n'],
        ['Weekly report!', 'CLICK HERE to claim your FREE prize!!! Limited offer, act now, viagra casino $$$\r\n'],
      ]) {
        const reply = await send(message(subject, reused, body));
        assert.ok(!(reply instanceof Error) && reply.code === 250);
      }
      const maildir = path.join(dir, 'dovecot/mail/alice/Maildir');
      const cache = path.join(dir, 'client-cache');
      /** The headless client on alice's Maildir as Dovecot wrote it: its rows (the --state file). */
      const classify = async (run: string) => {
        const state = path.join(dir, `${run}.jsonl`);
        const args = ['classify', '--server', provider.server.httpUrl, '--token', token, '--cache', cache];
        assert.equal(await clientCli([...args, '--state', state, maildir]), 0);
        return fs
          .readFileSync(state, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { id: string; verdict: string });
      };
      const ids = [...(await inbox('Weekly report')), ...(await inbox('Weekly report!'))];
      assert.equal(new Set(ids).size, 2, 'two provider ids for one sender Message-ID');
      const first = await classify('first');
      for (const id of ids) {
        const v = first.find((o) => o.id === id);
        assert.ok(
          v && (v.verdict === 'spam' || v.verdict === 'ham'),
          `a private verdict for ${id}: ${JSON.stringify(v)}`,
        );
      }
      // At most once still holds, per provider id.
      const second = await classify('second');
      for (const id of ids) assert.equal(second.find((o) => o.id === id)?.verdict, 'already-classified');
    } finally {
      await provider.close();
    }
  });
});
