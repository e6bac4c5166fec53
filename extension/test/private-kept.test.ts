// The extension's worker keeps each spam request in its IndexedDB before it
// leaves, and a worker that stopped while the answer was on its way (a
// closed browser) finds it there at its next call: the message gets the
// verdict the provider recorded, instead of "already checked" without one.
import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { WebSocket } from 'ws';
import { createConnector } from '../../client/core/connect.js';
import { runClassification } from '../../client/core/runner.js';
import { DirectoryStorage } from '../../client/node/node-storage.js';
import { tappedSocket } from '../../client/test/tapped-socket.js';
import { loadSpamAssassin } from '../../models/data/loaders.js';
import { extractFeatures } from '../../models/features/index.js';
import { loadPlainModel, plainVerdict } from '../../models/plain/index.js';
import { SCHEMAS } from '../../protocol/messages.js';
import { startRealProvider, type RealProvider } from '../../provider-server/test/real-provider.js';
import { loadHe } from '../../wasm/ts/he.js';
import { accountOf } from '../private/account.js';
import { PrivateStore } from '../private/store.js';
import type { ItemOutcome } from '../private/worker-protocol.js';
import { inProcessWorker } from './worker-link.js';

let provider: RealProvider;
let store: PrivateStore;

before(async () => {
  provider = await startRealProvider();
  store = await PrivateStore.open(); // the worker's own database
  await store.setSettings({ linkCheck: false, topics: false });
});
after(async () => {
  delete (globalThis as { WebSocket?: unknown }).WebSocket;
  store.close();
  await provider.close();
});

test('a request kept before a stop is re-sent at the next call and gives the recorded verdict', async () => {
  const user = await provider.store.addUser('kept-in-extension');
  const config = { url: provider.server.httpUrl, token: user.token };
  const kept = store.keptRequests(accountOf(config));
  const [stopped, fresh] = loadSpamAssassin()
    .filter((e) => e.split === 'test' && e.label === 'spam')
    .slice(0, 2);
  for (const m of [stopped, fresh]) await provider.store.deliver(user.userId, m.id, 'Subject: x\r\n\r\n(ciphertext)');

  // A run over the extension's store sends the request, loses the answer and stops.
  const connector = createConnector({
    server: config.url,
    token: config.token,
    he: await loadHe(),
    storage: new DirectoryStorage(fs.mkdtempSync(path.join(provider.dir, 'client-'))),
    socket: tappedSocket({ drop: (type) => type === SCHEMAS.spam_gc.type }),
    kept,
  });
  let sessions = 0;
  await assert.rejects(
    runClassification([{ id: stopped.id, raw: async () => stopped.raw as string }], {
      connect: (n) => (sessions++ === 0 ? connector.connect(n) : Promise.reject(new Error('the browser closed'))),
      onOutcome: () => assert.fail('no outcome before the stop'),
    }),
    /the browser closed/,
  );
  assert.ok(await kept.get(stopped.id), 'kept in IndexedDB');

  // The next worker call: the kept one is re-sent, the fresh one is kept while its answer is on the way.
  const keptWhenSent: Promise<unknown>[] = [];
  (globalThis as { WebSocket?: unknown }).WebSocket = class extends WebSocket {
    override send(data: Uint8Array) {
      if (data[1] === SCHEMAS.spam_request.type) keptWhenSent.push(kept.get(fresh.id));
      super.send(data);
    }
  };
  const outcomes: ItemOutcome[] = [];
  await inProcessWorker().call(
    {
      kind: 'classify',
      provider: config,
      items: [stopped, fresh].map((m) => ({ messageId: m.id, raw: m.raw as string })),
    },
    (e) => void (e.event === 'outcome' && outcomes.push(e.outcome)),
  );
  const plain = loadPlainModel(new Uint8Array(fs.readFileSync('models/default/spam.pmfm')));
  const spec = connector.model()!.spec;
  assert.deepEqual(
    outcomes.map((o) => [o.messageId, o.kind, o.kind === 'verdict' && o.spam]),
    await Promise.all(
      [stopped, fresh].map(async (m) => [
        m.id,
        'verdict',
        plainVerdict(plain, await extractFeatures(m.raw as string, spec)) === 'spam',
      ]),
    ),
  );
  assert.equal(keptWhenSent.length, 1, 'one new request (the kept one went as spam_resend)');
  assert.ok(await keptWhenSent[0], 'the new request was kept before it left');
  for (const m of [stopped, fresh]) assert.equal(await kept.get(m.id), undefined, 'forgotten once stored');
});
