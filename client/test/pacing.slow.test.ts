// The client paces itself to the provider's request limit: with a limit of
// 4 counted frames a minute, three emails (base OTs, one extension, three
// requests: 5 frames) all get their verdict without one refusal or
// reconnect, the fifth frame a minute after the first. Slow: it waits that minute.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { loadSpamAssassin } from '../../models/data/loaders.js';
import { startRealProvider } from '../../provider-server/test/real-provider.js';
import { loadHe } from '../../wasm/ts/he.js';
import { createConnector } from '../core/connect.js';
import { WINDOW_MS } from '../core/pacer.js';
import { runClassification, type RunOutcome } from '../core/runner.js';
import { nodeSocket } from '../node/cli.js';
import { DirectoryStorage } from '../node/node-storage.js';

test('a client under a tight request limit is paced, never refused', { timeout: 240_000 }, async () => {
  const provider = await startRealProvider({ overrides: { limits: { requestsPerMinute: 4 } } });
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-pacing-'));
  try {
    const user = await provider.store.addUser('paced');
    const mails = loadSpamAssassin()
      .filter((e) => e.split === 'test')
      .slice(0, 3);
    for (const m of mails) await provider.store.deliver(user.userId, m.id, m.raw as string);
    const connector = createConnector({
      server: provider.server.httpUrl,
      token: user.token,
      he: await loadHe(),
      storage: new DirectoryStorage(dir),
      socket: nodeSocket,
    });
    const outcomes: RunOutcome[] = [];
    const refusals: string[] = [];
    const start = Date.now();
    await runClassification(
      mails.map((m) => ({ id: m.id, raw: async () => m.raw as string })),
      {
        connect: () => connector.connect(mails.length),
        onOutcome: (o) => void outcomes.push(o),
        onReconnect: (_, e) => void refusals.push(e.message),
      },
    );
    assert.deepEqual(refusals, [], 'no refusal, no reconnect');
    assert.deepEqual(
      outcomes.map((o) => o.kind),
      ['verdict', 'verdict', 'verdict'],
    );
    assert.ok(Date.now() - start >= WINDOW_MS - 1000, `paced: ${Date.now() - start} ms`);
  } finally {
    await provider.close();
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
