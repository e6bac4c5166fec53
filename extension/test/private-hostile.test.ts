// One hostile message must not hold up the mail after it, in the extension's
// worker (the Chromium and Firefox builds) and in Thunderbird's spam check:
// against a real provider, a huge message (the 150,000-word text that once
// overflowed the extractor's stack and failed every batch it was in) arrives
// between two ordinary ones, and all three get the plaintext model's verdict.
// A message whose check keeps failing is given up on after FAILED_TRIES.
import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { after, before, test } from 'node:test';
import { WebSocket } from 'ws';
import { loadSpamAssassin } from '../../models/data/loaders.js';
import { extractFeatures } from '../../models/features/index.js';
import { loadPlainModel, plainVerdict } from '../../models/plain/index.js';
import { BUNDLED_MODELS, startRealProvider, type RealProvider } from '../../provider-server/test/real-provider.js';
import { NOT_CHECKED, outcomeBadge } from '../private/faults.js';
import { accountOf, type ProviderConfig } from '../private/account.js';
import { FAILED_TRIES, PrivateStore } from '../private/store.js';
import type { ItemOutcome } from '../private/worker-protocol.js';
import { watchSpam } from '../thunderbird/spam-check.js';
import { fakeMessenger, header } from './fake-messenger.js';
import { inProcessWorker } from './worker-link.js';

let provider: RealProvider;
let store: PrivateStore;
const plain = loadPlainModel(new Uint8Array(fs.readFileSync(BUNDLED_MODELS.spam)));
const heldOut = loadSpamAssassin().filter((e) => e.split === 'test');
const huge = `From: a@b.example\r\nSubject: long\r\n\r\n${Array.from({ length: 150_000 }, (_, i) => `w${i % 5000}`).join(' ')}\r\n`;

before(async () => {
  provider = await startRealProvider();
  store = await PrivateStore.open(); // the worker's own database
  await store.setSettings({ linkCheck: false, topics: false });
  (globalThis as { WebSocket?: unknown }).WebSocket = WebSocket;
});
after(async () => {
  delete (globalThis as { WebSocket?: unknown }).WebSocket;
  store.close();
  await provider.close();
});

/** A user of the provider with these messages delivered under their ids. */
async function userWith(name: string, mail: { id: string; raw: string }[]): Promise<ProviderConfig> {
  const { userId, token } = await provider.store.addUser(name);
  for (const m of mail) await provider.store.deliver(userId, m.id, 'Subject: x\r\n\r\n(ciphertext)');
  return { url: provider.server.httpUrl, token };
}

const expected = async (raw: string) =>
  plainVerdict(plain, await extractFeatures(raw, plain.header.featureSpec)) === 'spam';

test('worker: a huge message between two ordinary ones, and all three get their verdicts in order', async () => {
  const mail = [
    { id: 'before', raw: heldOut.find((e) => e.label === 'spam')!.raw as string },
    { id: 'huge', raw: huge },
    { id: 'after', raw: heldOut.find((e) => e.label === 'ham')!.raw as string },
  ];
  const config = await userWith('hostile-worker', mail);
  const outcomes: ItemOutcome[] = [];
  await inProcessWorker().call(
    { kind: 'classify', provider: config, items: mail.map((m) => ({ messageId: m.id, raw: m.raw })) },
    (e) => void (e.event === 'outcome' && outcomes.push(e.outcome)),
  );
  assert.deepEqual(
    outcomes.map((o) => [o.messageId, o.kind === 'verdict' && o.spam]),
    await Promise.all(mail.map(async (m) => [m.id, await expected(m.raw)])),
  );
});

test('Thunderbird: a huge message arriving between two ordinary ones does not hold them up', async () => {
  const pmf = (n: number) => `pmf-${String(n).padStart(32, '0')}`;
  const texts = [
    heldOut.find((e) => e.label === 'spam')!.raw as string,
    huge,
    heldOut.find((e) => e.label === 'ham')!.raw as string,
  ];
  const mail = texts.map((raw, i) => ({ id: pmf(i + 1), raw }));
  const config = await userWith('hostile-thunderbird', mail);
  await store.setProvider(config);
  const inbox = { id: 'a/INBOX', accountId: 'alice', specialUse: ['inbox'] };
  const junk = { id: 'a/Junk', accountId: 'alice', specialUse: ['junk'] };
  const fake = fakeMessenger({
    folders: [inbox, junk],
    mail: mail.map((m, i) => ({
      header: header(i + 1, { folder: { ...inbox } }),
      raw: `X-PMF-Message-Id: ${m.id}\r\nSubject: ...\r\n\r\n-----BEGIN PGP MESSAGE-----\n\nfake${i}\n-----END PGP MESSAGE-----\n`,
    })),
  });
  const worker = inProcessWorker();
  watchSpam(fake.api, {
    store: async () => store,
    classify: (provider, items, onEvent) => worker.call({ kind: 'classify', provider, items }, onEvent),
    // The add-on's own decryption: the message text behind each fake block.
    decrypt: async (block) => texts[Number(/fake(\d)/.exec(block.armored)![1])],
    failureOf: (e) => ({ code: 'protocol', detail: String(e) }),
    area: { get: async () => ({}), set: async () => {} },
  });
  for (const l of fake.listeners['messages.onNewMailReceived'])
    (l as (...a: unknown[]) => void)(inbox, {
      id: null,
      messages: mail.map((_, i) => header(i + 1, { folder: { ...inbox } })),
    });
  const account = accountOf(config);
  for (const deadline = Date.now() + 60_000; ; await new Promise((r) => setTimeout(r, 50))) {
    const stored = await Promise.all(mail.map((m) => store.verdict(account, m.id)));
    if (stored.every((v) => v?.kind === 'verdict')) break;
    assert.ok(Date.now() < deadline, `verdicts so far: ${JSON.stringify(stored)}`);
  }
  for (const [i, m] of mail.entries()) {
    const v = await store.verdict(account, m.id);
    assert.equal(v?.kind === 'verdict' && v.spam, await expected(texts[i]), m.id);
  }
});

test('a message whose check keeps failing is asked about again until FAILED_TRIES, then given up on', async () => {
  const account = 'acct';
  for (let i = 1; i < FAILED_TRIES; i++) {
    const f = await store.recordFailure(account, 'bad', 'could not be classified: out of memory');
    assert.equal(f.final, false);
    assert.equal(await store.verdict(account, 'bad'), undefined, 'not settled: offered again');
  }
  const last = await store.recordFailure(account, 'bad', 'could not be classified: out of memory');
  assert.equal(last.final, true);
  const v = await store.verdict(account, 'bad');
  assert.equal(v?.kind, 'failed', 'settled: never offered again');
  assert.equal(outcomeBadge(v!).text, NOT_CHECKED);
  assert.match(outcomeBadge(v!).detail!, /out of memory/, 'the reason behind the disclosure');
  assert.equal(await store.countVerdictsSince(account, 0), 0, 'not counted as classified');
});
