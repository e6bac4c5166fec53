// End to end with the real crypto: provider-server (worker pool, lattice
// decryption, garbling, OT) and the headless client over WebSocket, on
// SpamAssassin test-split messages encrypted with OpenPGP.js.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import * as openpgp from 'openpgp';
import { loadSpamAssassin } from '../../models/data/loaders.js';
import { extractFeatures } from '../../models/features/index.js';
import { loadPlainModel, plainVerdict } from '../../models/plain/index.js';
import { startProvider, type Provider } from '../../provider-server/src/provider.js';
import { markClassified } from '../../provider-server/test/harness.js';
import { loopbackConfig, startRealProvider } from '../../provider-server/test/real-provider.js';
import { heLayout, keySwitchKeyBytes, loadHe, type He } from '../../wasm/ts/he.js';
import { nodeSocket } from '../node/cli.js';
import { createConnector, type ConnectorOptions } from '../core/connect.js';
import { DirectoryStorage } from '../node/node-storage.js';
import { decryptMessage } from '../../mail/decrypt.js';
import { runJournal, type KeptRequests, type KeptSpamRequest } from '../core/kept-requests.js';
import { runClassification, type RunOutcome } from '../core/runner.js';
import { tappedSocket } from './tapped-socket.js';
import { CLIENT_MAX_FRAME_BYTES } from '../../protocol/limits.js';
import { decodeMessage, encodeMessage, SCHEMAS } from '../../protocol/messages.js';

const MODEL = path.resolve('models/default/spam.pmfm');
let dir: string;
let provider: Provider;
let he: He;
let token: string;
let userId: number;
const mails: { id: string; label: string; raw: string; encrypted: string }[] = [];
let keys: openpgp.PrivateKey[];
const plain = loadPlainModel(new Uint8Array(fs.readFileSync(MODEL)));

const config = (port = 0) => loopbackConfig(path.join(dir, 'provider'), { port });

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-e2e-'));
  provider = await startProvider(config(), { progress: () => {}, log: () => {} });
  ({ token, userId } = await provider.store.addUser('e2e'));
  he = await loadHe();
  const { privateKey, publicKey } = await openpgp.generateKey({
    type: 'curve25519',
    userIDs: [{ email: 'e2e@test.invalid' }],
    format: 'object',
  });
  keys = [privateKey];
  const test = loadSpamAssassin().filter((e) => e.split === 'test');
  for (const e of [
    ...test.filter((x) => x.label === 'spam').slice(0, 5),
    ...test.filter((x) => x.label === 'ham').slice(0, 5),
  ]) {
    const raw = e.raw as string;
    const armored = await openpgp.encrypt({
      message: await openpgp.createMessage({ text: raw }),
      encryptionKeys: publicKey,
    });
    const encrypted = `From: a@b\r\nSubject: ...\r\nMessage-ID: <${e.id}>\r\nContent-Type: multipart/encrypted; protocol="application/pgp-encrypted"; boundary="x"\r\n\r\n--x\r\nContent-Type: application/pgp-encrypted\r\n\r\nVersion: 1\r\n--x\r\nContent-Type: application/octet-stream\r\n\r\n${armored}\r\n--x--\r\n`;
    await provider.store.deliver(userId, e.id, encrypted);
    mails.push({ id: e.id, label: e.label, raw, encrypted });
  }
});
after(async () => {
  await provider.close();
  fs.rmSync(dir, { recursive: true, force: true });
});

/** A client connector to the running provider, caching the package in dir/cacheName. */
function connectorFor(cacheName: string, socket = nodeSocket, userKeys?: ConnectorOptions['userKeys']) {
  return createConnector({
    server: provider.server.httpUrl,
    token,
    he,
    storage: new DirectoryStorage(path.join(dir, cacheName)),
    socket,
    userKeys,
  });
}
test('a key-switching key an older build stored (layouts 1 and 2) is dropped and the welcome brings the current one', async () => {
  // Layout 1: two limbs, 14 digits, before n' = 2048; layout 2: 7 digits modulo q2, before q_ks.
  for (const [layout, bytes] of [
    [1, 774_178],
    [2, 193_570],
  ]) {
    const saved = new Map<string, { epoch: number; ksk: Uint8Array }>();
    const old = new Uint8Array(bytes);
    old.set([0x4b, layout]);
    saved.set('spam-v1', { epoch: 1, ksk: old });
    const connector = connectorFor(`cache-old-ksk-${layout}`, nodeSocket, {
      get: async (k) => saved.get(k),
      put: async (k, v) => void saved.set(k, v),
    });
    const s = await connector.connect(1);
    s.close();
    const fresh = saved.get('spam-v1')!;
    assert.deepEqual(
      [...fresh.ksk.subarray(1, 3)],
      [3, plain.header.T],
      `layout ${layout} replaced by the current one`,
    );
    assert.equal(fresh.ksk.length, keySwitchKeyBytes(plain.header.T));
  }
});

test('private verdicts equal the plaintext model on encrypted mail; a provider restart mid-run resumes without reclassifying', async () => {
  const connector = connectorFor('cache');
  const outcomes: RunOutcome[] = [];
  const reconnects: number[] = [];
  const port = provider.server.port;
  await runClassification(
    mails.map((m) => ({ id: m.id, raw: () => decryptMessage(m.encrypted, keys) })),
    {
      connect: (n) => connector.connect(n),
      onReconnect: (n) => reconnects.push(n),
      onOutcome: async (o) => {
        outcomes.push(o);
        if (outcomes.length === 4) {
          // The provider goes away and comes back on the same port and data directory.
          await provider.close();
          provider = await startProvider(config(port), { progress: () => {}, log: () => {} });
        }
      },
    },
  );
  assert.ok(reconnects.length >= 1, 'the client reconnected');
  assert.deepEqual(
    outcomes.map((o) => o.messageId),
    mails.map((m) => m.id),
    'one outcome per message, in order',
  );
  const { lweBytes } = heLayout(connector.model()!.params);
  for (const o of outcomes) {
    assert.equal(o.kind, 'verdict');
    if (o.kind !== 'verdict') continue;
    const m = mails.find((x) => x.id === o.messageId)!;
    const reference = plainVerdict(plain, await extractFeatures(m.raw, connector.model()!.spec));
    assert.equal(o.label, reference, `${m.id}: private verdict equals the quantized plaintext verdict`);
    assert.equal(o.invalidOutput, false);
    assert.ok(
      o.bytesSent > lweBytes && o.bytesSent < lweBytes + 2_000,
      `one LWE ciphertext per email, got ${o.bytesSent}`,
    );
    assert.equal(await provider.store.isClassified(userId, m.id), true);
  }
  assert.ok(
    outcomes.some((o) => o.kind === 'verdict' && o.spam) && outcomes.some((o) => o.kind === 'verdict' && !o.spam),
  );
});

test('a message classified by another client is reported as already classified, never classified twice', async () => {
  const lost = 'lost-answer@test';
  await provider.store.deliver(userId, lost, mails[0].encrypted);
  await markClassified(provider.store, userId, lost); // classified, and acknowledged, by another client
  const connector = connectorFor('cache');
  const outcomes: RunOutcome[] = [];
  await runClassification(
    [
      { id: lost, raw: () => decryptMessage(mails[0].encrypted, keys) },
      { id: 'not-delivered@test', raw: async () => mails[1].raw },
    ],
    {
      connect: (n) => connector.connect(n),
      onOutcome: (o) => void outcomes.push(o),
    },
  );
  assert.deepEqual(
    outcomes.map((o) => [o.messageId, o.kind]),
    [
      [lost, 'already_classified'],
      ['not-delivered@test', 'unknown_message'],
    ],
  );
});

/** A device's kept requests, in memory (structured clones, as IndexedDB keeps them). */
function keptInMemory(): KeptRequests & { records: Map<string, KeptSpamRequest> } {
  const records = new Map<string, KeptSpamRequest>();
  return {
    records,
    get: async (id) => records.get(id),
    put: async (id, k) => void records.set(id, structuredClone(k)),
    delete: async (id) => void records.delete(id),
  };
}

/**
 * Classifies one message and stops as a crashed client does, nothing in
 * memory surviving: right after the request left, its answer lost (`lose`),
 * or once the verdict was in but before its outcome was stored.
 */
async function stopMidRequest(id: string, raw: string, kept: KeptRequests | undefined, lose: boolean): Promise<void> {
  const connector = createConnector({
    server: provider.server.httpUrl,
    token,
    he,
    storage: new DirectoryStorage(path.join(dir, 'cache')),
    socket: tappedSocket({ drop: (type) => lose && type === SCHEMAS.spam_gc.type }),
    kept,
  });
  let sessions = 0;
  await assert.rejects(
    runClassification([{ id, raw: async () => raw }], {
      connect: (n) => (sessions++ === 0 ? connector.connect(n) : Promise.reject(new Error('the client stopped'))),
      onOutcome: () => Promise.reject(new Error('the client stopped')),
    }),
    /the client stopped/,
  );
  assert.equal(await provider.store.isClassified(userId, id), true, 'the provider recorded the answer it sent');
}

/** The next run over the message, with what the device kept; the frame types it sent. */
async function nextRun(id: string, raw: string, kept?: KeptRequests) {
  const sent: (number | undefined)[] = [];
  const connector = createConnector({
    server: provider.server.httpUrl,
    token,
    he,
    storage: new DirectoryStorage(path.join(dir, 'cache')),
    socket: tappedSocket({ sent: (type) => void sent.push(type) }),
    kept,
  });
  const outcomes: RunOutcome[] = [];
  await runClassification([{ id, raw: async () => raw }], {
    connect: (n) => connector.connect(n),
    journal: kept && runJournal(he.core, kept),
    onOutcome: (o) => void outcomes.push(o),
  });
  const label = async () => plainVerdict(plain, await extractFeatures(raw, connector.model()!.spec));
  return { outcomes, sent, label };
}

test('a client that stops while its answer is on the way gets that verdict at its next run, from the request it kept', async () => {
  const kept = keptInMemory();
  const [spam, ham] = [mails[0], mails[5]];
  for (const m of [spam, ham]) await provider.store.deliver(userId, `kept-${m.id}`, m.encrypted);

  await stopMidRequest(`kept-${spam.id}`, spam.raw, kept, true);
  assert.equal(kept.records.size, 1, 'the request was kept before it left');
  const run = await nextRun(`kept-${spam.id}`, spam.raw, kept);
  const [o] = run.outcomes;
  assert.equal(o.kind, 'verdict', JSON.stringify(o));
  assert.equal(o.kind === 'verdict' && o.label, await run.label(), 'the recorded answer gives the plaintext verdict');
  assert.ok(run.sent.includes(SCHEMAS.spam_resend.type), 'the kept request was sent again');
  assert.equal(kept.records.size, 0, 'forgotten once the outcome is stored');

  // The same stop without a kept request: the answer is recorded, but nobody can evaluate it any more.
  await stopMidRequest(`kept-${ham.id}`, ham.raw, undefined, true);
  assert.deepEqual(
    (await nextRun(`kept-${ham.id}`, ham.raw, kept)).outcomes.map((x) => x.kind),
    ['already_classified'],
  );
});

test('an answer that arrived before the stop is evaluated again from the device, never asked for twice; one that does not evaluate is dropped', async () => {
  const kept = keptInMemory();
  const [arrived, damaged] = [mails[1], mails[6]];
  for (const m of [arrived, damaged]) await provider.store.deliver(userId, `answered-${m.id}`, m.encrypted);

  await stopMidRequest(`answered-${arrived.id}`, arrived.raw, kept, false);
  assert.ok(kept.records.get(`answered-${arrived.id}`)?.answer, 'the answer was kept before it was evaluated');
  const run = await nextRun(`answered-${arrived.id}`, arrived.raw, kept);
  const [o] = run.outcomes;
  assert.equal(o.kind === 'verdict' && o.label, await run.label(), JSON.stringify(o));
  const asked: number[] = [SCHEMAS.spam_request, SCHEMAS.spam_resend, SCHEMAS.spam_done].map((x) => x.type);
  assert.deepEqual(
    run.sent.filter((t) => asked.includes(t!)),
    [],
    'nothing asked or acknowledged again: the first run sent spam_done',
  );
  assert.equal(kept.records.size, 0);

  await stopMidRequest(`answered-${damaged.id}`, damaged.raw, kept, false);
  kept.records.get(`answered-${damaged.id}`)!.answer![0] ^= 0xff; // no longer a gc_spam
  await assert.rejects(nextRun(`answered-${damaged.id}`, damaged.raw, kept), /gc_spam/);
  assert.equal(kept.records.size, 0, 'dropped, so that the next run is not stuck on it');
  assert.deepEqual(
    (await nextRun(`answered-${damaged.id}`, damaged.raw, kept)).outcomes.map((x) => x.kind),
    ['already_classified'],
  );
});

test('after the provider rotates its model, a client on the old version is told to update, downloads it and goes on', async () => {
  const connector = connectorFor('cache-rotate');
  const before = await connector.connect(1);
  before.close();
  assert.equal(connector.model()!.header.modelVersion, 1);
  // Retrained model: the provider builds version 2 (fresh key and seed) on restart.
  const versions = path.join(dir, 'provider', 'models', 'spam', 'versions.json');
  fs.writeFileSync(
    versions,
    fs.readFileSync(versions, 'utf8').replace(/"sourceSha256": "[0-9a-f]+"/, '"sourceSha256": "retrained"'),
  );
  const port = provider.server.port;
  await provider.close();
  provider = await startProvider(config(port), { progress: () => {}, log: () => {} });
  assert.equal(provider.catalog.current('spam')!.version, 2);
  await provider.store.deliver(userId, 'after-rotation@test', mails[1].encrypted);
  const s = await connector.connect(1);
  assert.equal(connector.model()!.header.modelVersion, 2);
  const v = await s.classify('after-rotation@test', await decryptMessage(mails[1].encrypted, keys));
  s.close();
  assert.equal(v.label, plainVerdict(plain, await extractFeatures(mails[1].raw, connector.model()!.spec)));
});

/** A socket that keeps a copy of every frame the client sends into `sent`. */
function recordingSocket(sent: Uint8Array[]): typeof nodeSocket {
  return (url) => {
    const ws = nodeSocket(url);
    const send = ws.send.bind(ws);
    ws.send = (data: Uint8Array) => {
      sent.push(new Uint8Array(data));
      send(data);
    };
    return ws;
  };
}

test('what leaves the client: only protocol frames, one fresh LWE ciphertext and choice bits per email, no plaintext', async () => {
  const sent: Uint8Array[] = [];
  const same = mails[2];
  for (const id of ['twin-1@test', 'twin-2@test']) await provider.store.deliver(userId, id, same.encrypted);
  const connector = connectorFor('cache-wire', recordingSocket(sent));
  const s = await connector.connect(2);
  const plaintext = await decryptMessage(same.encrypted, keys);
  const v1 = await s.classify('twin-1@test', plaintext);
  const v2 = await s.classify('twin-2@test', plaintext);
  s.close();
  assert.equal(v1.spam, v2.spam);
  const frames = sent.map((f) => decodeMessage(f, CLIENT_MAX_FRAME_BYTES));
  assert.deepEqual([...new Set(frames.map((f) => f.name))].sort(), ['bye', 'hello', 'ot', 'spam_done', 'spam_request']);
  const requests = frames.filter((f) => f.name === 'spam_request');
  assert.equal(requests.length, 2);
  const [a, b] = requests.map((r) => (r.name === 'spam_request' ? r : assert.fail()));
  const params = connector.model()!.params;
  // n' = n/2 = 2048 a-values at Q − 1 bits after the key switch, plus b' at Q bits.
  assert.equal(
    a.lwe.length,
    3 + Math.ceil((params.Q + (params.n / 2) * (params.Q - 1)) / 8),
    'exactly one bit-packed LWE ciphertext',
  );
  assert.notDeepEqual(
    a.lwe,
    b.lwe,
    'the same email gives unrelated ciphertexts (fresh re-randomization, blinding, flooding)',
  );
  assert.ok(a.choices.length <= 8 + Math.ceil(params.T / 8) + 8, 'one choice bit per input bit plus a small header');
  // No token of the decrypted text crosses the wire.
  const wire = Buffer.concat(sent);
  for (const word of plaintext.match(/[A-Za-z]{9,}/g)!.slice(0, 50))
    assert.equal(wire.includes(Buffer.from(word)), false, word);
});

test('an answer naming another message is refused (a provider cannot move a verdict between emails)', async () => {
  // The provider's spam_gc is rewritten in transit to name another message.
  const relabelling: typeof nodeSocket = (url) => {
    const ws = nodeSocket(url);
    const add = ws.addEventListener.bind(ws);
    ws.addEventListener = (type, listener) =>
      add(type, (ev) => {
        const data = ev.data;
        const bytes =
          data instanceof ArrayBuffer ? new Uint8Array(data) : data instanceof Uint8Array ? data : undefined;
        const m = type === 'message' && bytes ? decodeMessage(bytes, CLIENT_MAX_FRAME_BYTES) : undefined;
        if (m?.name !== 'spam_gc') return listener(ev);
        listener({ data: encodeMessage('spam_gc', m.requestId, { messageId: 'someone-else', gc: m.gc }) });
      });
    return ws;
  };
  await provider.store.deliver(userId, 'relabelled@test', mails[0].encrypted);
  const s = await connectorFor('cache-relabel', relabelling).connect(1);
  try {
    await assert.rejects(
      s.classify('relabelled@test', await decryptMessage(mails[0].encrypted, keys)),
      /spam_gc names message someone-else, not relabelled@test/,
    );
  } finally {
    s.close();
  }
});

test('a provider that reads small frames gets OT extensions that fit them, and the verdicts it would give anyway', async () => {
  const maxFrameBytes = 64 * 1024;
  const small = await startRealProvider({ overrides: { limits: { maxFrameBytes } } });
  try {
    const user = await small.store.addUser('small-frames');
    const some = mails.slice(0, 2);
    for (const m of some) await small.store.deliver(user.userId, m.id, m.encrypted);
    const sent: Uint8Array[] = [];
    const connector = createConnector({
      server: small.server.httpUrl,
      token: user.token,
      he,
      storage: new DirectoryStorage(path.join(dir, 'cache-small-frames')),
      socket: recordingSocket(sent),
    });
    const outcomes: RunOutcome[] = [];
    // A session announced for many emails asks for about 2 MiB of OTs at once: more than one frame holds.
    await runClassification(
      some.map((m) => ({ id: m.id, raw: async () => m.raw })),
      { connect: () => connector.connect(5000), onOutcome: (o) => void outcomes.push(o) },
    );
    for (const o of outcomes) {
      assert.equal(o.kind, 'verdict', JSON.stringify(o));
      if (o.kind !== 'verdict') continue;
      const m = some.find((x) => x.id === o.messageId)!;
      assert.equal(o.label, plainVerdict(plain, await extractFeatures(m.raw, connector.model()!.spec)));
    }
    assert.equal(outcomes.length, some.length);
    const largest = Math.max(...sent.map((f) => f.length));
    assert.ok(largest <= maxFrameBytes, `largest frame ${largest} B`);
    const extensions = sent.map((f) => decodeMessage(f, CLIENT_MAX_FRAME_BYTES)).filter((f) => f.name === 'ot');
    assert.ok(extensions.length > 10, `${extensions.length} ot frames`);
  } finally {
    await small.close();
  }
});
