import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyError } from '../lib/errors.js';
import { KeyStore } from '../lib/keystore.js';
import { UnlockCache, type SessionArea } from '../lib/unlock-cache.js';
import { makeParty } from './mail-fixtures.js';

let n = 0;
function memorySession(): SessionArea & { data: Record<string, unknown> } {
  const data: Record<string, unknown> = {};
  return {
    data,
    get: async (k) => (k in data ? { [k]: structuredClone(data[k]) } : {}),
    set: async (items) => void Object.assign(data, structuredClone(items)),
    remove: async (k) => void delete data[k],
  };
}

async function storeWithTwoKeys() {
  const store = await KeyStore.open(`unlock-test-${n++}`);
  const a = await makeParty('A', 'a@example.org', 'passphrase-one');
  const b = await makeParty('B', 'b@example.org', 'passphrase-two');
  const [ia] = await store.importArmored(a.privateArmored, a.passphrase);
  const [ib] = await store.importArmored(b.privateArmored, b.passphrase);
  return { store, ia, ib };
}

describe('UnlockCache', () => {
  it('unlocks only the keys the passphrase opens and rejects a wrong passphrase', async () => {
    const { store, ia } = await storeWithTwoKeys();
    const cache = new UnlockCache(store);
    await assert.rejects(
      cache.unlock('wrong wrong', 60_000),
      (e) => e instanceof KeyError && e.code === 'wrong-passphrase',
    );
    assert.equal((await cache.keys()).size, 0);
    assert.deepEqual(await cache.unlock('passphrase-one', 60_000), [ia.fingerprint]);
    const keys = await cache.keys();
    assert.deepEqual([...keys.keys()], [ia.fingerprint]);
    assert.ok(keys.get(ia.fingerprint)!.isDecrypted());
    await cache.lock();
    assert.equal((await cache.keys()).size, 0);
    store.close();
  });

  it('forgets keys after the configured time', async () => {
    const { store } = await storeWithTwoKeys();
    let clock = 1_000_000;
    const session = memorySession();
    const cache = new UnlockCache(store, session, () => clock);
    await cache.unlock('passphrase-two', 5 * 60_000);
    clock += 5 * 60_000 - 1;
    assert.equal((await cache.keys()).size, 1);
    clock += 1;
    assert.equal((await cache.keys()).size, 0);
    // A restarted background must not resurrect the expired key either.
    assert.equal((await new UnlockCache(store, session, () => clock).keys()).size, 0);
    store.close();
  });

  it('survives a background restart through the session area, and lock() clears it', async () => {
    const { store, ib } = await storeWithTwoKeys();
    const session = memorySession();
    await new UnlockCache(store, session).unlock('passphrase-two', 60_000);
    const restarted = new UnlockCache(store, session);
    assert.deepEqual([...(await restarted.keys()).keys()], [ib.fingerprint]);
    await restarted.lock();
    assert.deepEqual(session.data, {});
    assert.equal((await new UnlockCache(store, session).keys()).size, 0);
    store.close();
  });

  it('after a restart, requests arriving together all wait for the one restore (none finds the keys locked)', async () => {
    const { store, ib } = await storeWithTwoKeys();
    const session = memorySession();
    await new UnlockCache(store, session).unlock('passphrase-two', 60_000);
    const restarted = new UnlockCache(store, session);
    const seen = await Promise.all([restarted.keys(), restarted.keys(), restarted.passphrases()]);
    assert.deepEqual([...seen[0].keys()], [ib.fingerprint]);
    assert.deepEqual([...seen[1].keys()], [ib.fingerprint]);
    assert.deepEqual(seen[2], ['passphrase-two']);
    store.close();
  });
});
