// The device's lifetime flooding budget (docs/security.md#flooding-over-a-lifetime):
// what each ciphertext is charged, that the sum persists and never passes
// 2^-40, and that a real session sends nothing once it would.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { loadSpamAssassin } from '../../models/data/loaders.js';
import { countCap, extractFeatures } from '../../models/features/index.js';
import { SCHEMAS } from '../../protocol/messages.js';
import { loopbackConfig } from '../../provider-server/test/real-provider.js';
import { startProvider, type Provider } from '../../provider-server/src/provider.js';
import { tempDir } from '../../scripts/test/temp-dir.js';
import { loadHe } from '../../wasm/ts/he.js';
import { createConnector } from '../core/connect.js';
import { FLOOD_LIFETIME, FloodBudgetExhausted, FloodLedger, memoryFloodStore } from '../core/flood-ledger.js';
import { DirectoryStorage, FileFloodStore } from '../node/node-storage.js';
import { tappedSocket } from './tapped-socket.js';

let dir: string;
let provider: Provider;
let token: string;
let userId: number;

before(async () => {
  dir = tempDir('pmf-flood-');
  provider = await startProvider(loopbackConfig(path.join(dir, 'provider')), { progress: () => {}, log: () => {} });
  ({ token, userId } = await provider.store.addUser('flood'));
});
after(() => provider.close());

test('the ledger adds charges, refuses the one that would pass 2^-40 without adding it, one charge at a time', async () => {
  const ledger = new FloodLedger(memoryFloodStore(FLOOD_LIFETIME - 10n));
  await ledger.charge(4n);
  // Two charges that each fit, but not both: exactly one is accepted.
  const results = await Promise.allSettled([ledger.charge(5n), ledger.charge(5n)]);
  assert.deepEqual(
    results.map((r) => r.status),
    ['fulfilled', 'rejected'],
  );
  assert.ok((results[1] as PromiseRejectedResult).reason instanceof FloodBudgetExhausted);
  assert.equal(await ledger.spent(), FLOOD_LIFETIME - 1n);
  await ledger.charge(1n); // exactly at the limit is allowed
  await assert.rejects(ledger.charge(1n), FloodBudgetExhausted);
  assert.equal(await ledger.spent(), FLOOD_LIFETIME);
});

test("the CLI's file keeps the sum across runs and refuses a damaged one rather than start again at 0", async () => {
  const cache = tempDir('pmf-flood-file-');
  await new FloodLedger(new FileFloodStore(cache)).charge(123n);
  const again = new FloodLedger(new FileFloodStore(cache));
  await again.charge(7n);
  assert.equal(await again.spent(), 130n);
  assert.equal(fs.readFileSync(path.join(cache, 'flood-ledger'), 'utf8'), '130\n');
  fs.writeFileSync(path.join(cache, 'flood-ledger'), 'zero');
  await assert.rejects(new FloodLedger(new FileFloodStore(cache)).charge(1n), /damaged/);
});

test('a real session charges (22·Σx + 1,118)/2^(F+1) per email, and sends nothing once the budget is spent', async () => {
  const he = await loadHe();
  const email = loadSpamAssassin().find((e) => e.split === 'test')!;
  const raw = email.raw as string;
  const sent: (number | undefined)[] = [];
  const connector = (ledger: FloodLedger, cache: string) =>
    createConnector({
      server: provider.server.httpUrl,
      token,
      he,
      storage: new DirectoryStorage(path.join(dir, cache)),
      socket: tappedSocket({ sent: (type) => void sent.push(type) }),
      flood: ledger,
    });

  const ledger = new FloodLedger(memoryFloodStore());
  await provider.store.deliver(userId, 'one@test', raw);
  const c = connector(ledger, 'cache-a');
  const s = await c.connect(1);
  await s.classify('one@test', raw);
  s.close();
  // Independent of the wasm layer: the bound from the email's capped counts.
  const { params, spec } = c.model()!;
  const f = await extractFeatures(raw, spec);
  const sigmaX = 1 + [...f.counts].reduce((a, c) => a + Math.min(c, countCap(spec)), 0);
  const perEmail = BigInt(22 * sigmaX + 1_118) << BigInt(127 - params.F);
  assert.equal(await ledger.spent(), perEmail);
  assert.ok(perEmail < 1n << 77n, 'below 2^-51');

  // One unit short of this email's cost: refused before anything leaves.
  const spent = new FloodLedger(memoryFloodStore(FLOOD_LIFETIME - perEmail + 1n));
  await provider.store.deliver(userId, 'two@test', raw);
  const t = await connector(spent, 'cache-b').connect(1);
  sent.length = 0;
  await assert.rejects(t.classify('two@test', raw), FloodBudgetExhausted);
  t.close();
  assert.ok(!sent.includes(SCHEMAS.spam_request.type), 'no spam_request left the client');
  assert.equal(await spent.spent(), FLOOD_LIFETIME - perEmail + 1n, 'nothing was added');
});
