// Recorded answers nobody acknowledged (a client that never came back for
// its spam_gc) must not pile up in the store: the provider drops them after
// limits.answerRetentionMs, at start and then periodically; the claims stay.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import Database from 'better-sqlite3';
import { startProvider } from '../src/provider.js';
import { loopbackConfig } from './real-provider.js';

const REQUEST = new Uint8Array(32).fill(7);
const DAY = 86_400_000;

test('answers older than the retention are dropped when the provider starts; younger ones and claims stay', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-retention-'));
  try {
    const config = loopbackConfig(dir, { limits: { answerRetentionMs: DAY } });
    const quiet = { log: () => undefined, progress: () => undefined };
    const first = await startProvider(config, quiet);
    const { userId } = await first.store.addUser('away');
    for (const id of ['old', 'recent']) {
      await first.store.deliver(userId, id, 'Subject: x\r\n\r\nbody');
      const claim = (await first.store.claim(userId, id, 'spam', REQUEST)) as { attempt: Buffer };
      await first.store.recordAnswer(userId, id, 'spam', claim.attempt, Buffer.from(`gc of ${id}`));
    }
    await first.close();
    const db = new Database(path.join(dir, 'store.db'));
    db.prepare("UPDATE classified SET classified_at = ? WHERE message_id = 'old'").run(Date.now() - 2 * DAY);
    db.close();

    const logs: string[] = [];
    const second = await startProvider(config, { ...quiet, log: (l) => logs.push(l) });
    try {
      assert.equal(await second.store.recordedAnswer(userId, 'old', 'spam', REQUEST), 'already_classified');
      assert.equal(await second.store.isClassified(userId, 'old'), true, 'the claim stays');
      assert.deepEqual(await second.store.recordedAnswer(userId, 'recent', 'spam', REQUEST), {
        answer: Buffer.from('gc of recent'),
      });
      assert.ok(
        logs.some((l) => /dropped 1 recorded answers never acknowledged/.test(l)),
        logs.join('\n'),
      );
    } finally {
      await second.close();
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
