// A token the provider no longer accepts (revoked by the user or the
// operator, or expired unused: provider-server/src/tokens.ts) against a real
// provider-server: the worker names it for the user (bad_token: connect
// again), with the provider's reason behind the disclosure, instead of
// failing in some other way.
import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { WebSocket } from 'ws';
import { startRealProvider, type RealProvider } from '../../provider-server/test/real-provider.js';
import { failureText } from '../private/faults.js';
import { WorkerCallError } from '../private/worker-client.js';
import { inProcessWorker } from './worker-link.js';

let provider: RealProvider;
before(async () => {
  provider = await startRealProvider();
  (globalThis as { WebSocket?: unknown }).WebSocket = WebSocket; // the browser's, in the extension
});
after(async () => {
  delete (globalThis as { WebSocket?: unknown }).WebSocket;
  await provider.close();
});

const DAY = 86_400_000;

/** Classifies one message of `userId` with `token` through the worker, as the background asks it. */
async function classify(userId: number, token: string, messageId: string): Promise<unknown> {
  await provider.store.deliver(userId, messageId, 'Subject: x\r\n\r\n(ciphertext)');
  const items = [{ messageId, raw: 'Subject: lunch\r\n\r\nShall we meet at noon?' }];
  return inProcessWorker().call({ kind: 'classify', provider: { url: provider.server.httpUrl, token }, items });
}

test('a revoked token: the check is off with “connect again”, the reason behind the disclosure', async () => {
  const { userId, token } = await provider.store.addUser('revoked-user');
  assert.equal(await classify(userId, token, 'before'), null, 'classified while the token lives');
  const info = await provider.store.tokens.list(userId, { lifetimeMs: 90 * DAY });
  await provider.store.tokens.revoke(userId, info[0].id);
  await assert.rejects(
    classify(userId, token, 'after'),
    (e: unknown) => e instanceof WorkerCallError && e.failure.code === 'bad_token' && /revoked/.test(e.failure.detail),
  );
  assert.match(failureText('bad_token'), /no longer accepts.*Connect again/);
});

test('an expired token: the same clear state, saying it expired', async () => {
  const { userId } = await provider.store.addUser('expired-user');
  const old = await provider.store.tokens.issue(
    userId,
    'cli',
    { lifetimeMs: 90 * DAY, perUser: 5 },
    Date.now() - 91 * DAY,
  );
  await assert.rejects(
    classify(userId, old, 'old-token'),
    (e: unknown) => e instanceof WorkerCallError && e.failure.code === 'bad_token' && /expired/.test(e.failure.detail),
  );
});
