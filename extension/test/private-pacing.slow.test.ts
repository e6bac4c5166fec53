// The extension's worker under a provider's tight request limit (4 counted
// frames a minute), through the same typed calls the background makes: the
// client paces itself, so every message gets its verdict without a refusal,
// and the wait is told once ('slowed': the badge says the provider asked to
// slow down) instead of leaving "Checking…" for a minute. Slow: it waits that minute.
import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { WebSocket } from 'ws';
import { loadSpamAssassin } from '../../models/data/loaders.js';
import { startRealProvider, type RealProvider } from '../../provider-server/test/real-provider.js';
import { PrivateStore } from '../private/store.js';
import type { WorkerEvent } from '../private/worker-protocol.js';
import { inProcessWorker } from './worker-link.js';

let provider: RealProvider;
let settings: PrivateStore;

before(async () => {
  provider = await startRealProvider({ overrides: { limits: { requestsPerMinute: 4 } } });
  (globalThis as { WebSocket?: unknown }).WebSocket = WebSocket; // the browser's, in the extension
  settings = await PrivateStore.open(); // the worker's own database
  await settings.setSettings({ linkCheck: false, topics: false });
});
after(async () => {
  delete (globalThis as { WebSocket?: unknown }).WebSocket;
  settings.close();
  await provider.close();
});

test('a paced check is told as a wait, once, and ends with every verdict', { timeout: 240_000 }, async () => {
  const worker = inProcessWorker();
  const user = await provider.store.addUser('paced-in-extension');
  const mails = loadSpamAssassin()
    .filter((e) => e.split === 'test')
    .slice(0, 3);
  for (const m of mails) await provider.store.deliver(user.userId, m.id, 'Subject: x\r\n\r\n(ciphertext)');
  const events: WorkerEvent[] = [];
  await worker.call(
    {
      kind: 'classify',
      provider: { url: provider.server.httpUrl, token: user.token },
      items: mails.map((m) => ({ messageId: m.id, raw: m.raw as string })),
    },
    (e) => void events.push(e),
  );
  const told = events
    .filter((e) => e.event !== 'download')
    .map((e) => (e.event === 'outcome' ? e.outcome.kind : e.event));
  assert.equal(told.filter((k) => k === 'slowed').length, 1, `told: ${told.join(', ')}`);
  assert.deepEqual(
    told.filter((k) => k !== 'slowed'),
    ['verdict', 'verdict', 'verdict'],
  );
  assert.ok(told.indexOf('slowed') < told.lastIndexOf('verdict'), 'told while messages still waited');
});
