import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KeyError } from '../lib/errors.js';
import { KeyStore, type KeyInfo } from '../lib/keystore.js';
import { EXPIRY_ALARM, UnlockCache, type Alarms, type SessionArea } from '../lib/unlock-cache.js';
import { makeParty } from './mail-fixtures.js';

/** browser.storage.session in memory; `log` records the calls in order. */
function memorySession(): SessionArea & { data: Record<string, unknown>; log: string[] } {
  const data: Record<string, unknown> = {};
  const log: string[] = [];
  return {
    data,
    log,
    get: async (k) => (k in data ? { [k]: structuredClone(data[k]) } : {}),
    set: async (items) => void (log.push('set'), Object.assign(data, structuredClone(items))),
    remove: async (k) => void (log.push('remove'), delete data[k]),
    setAccessLevel: async ({ accessLevel }) => void log.push(accessLevel),
  };
}

/** browser.alarms in memory: the alarms set, by name. */
function memoryAlarms(): Alarms & { set: Map<string, number> } {
  const set = new Map<string, number>();
  return { set, create: (name, { when }) => set.set(name, when), clear: async (name) => set.delete(name) };
}

/** One store for every test (importing re-protects with Argon2id, a second per key): none changes it. */
let shared: Promise<{ store: KeyStore; ia: KeyInfo; ib: KeyInfo }> | undefined;
function storeWithTwoKeys() {
  return (shared ??= (async () => {
    const store = await KeyStore.open('unlock-test');
    const a = await makeParty('A', 'a@example.org', 'passphrase-one');
    const b = await makeParty('B', 'b@example.org', 'passphrase-two');
    const [ia] = await store.importArmored(a.privateArmored, a.passphrase);
    const [ib] = await store.importArmored(b.privateArmored, b.passphrase);
    return { store, ia, ib };
  })());
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
    await cache.lock(); // its expiry timer runs on real time: five minutes the test process would wait
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
  });

  it('after a restart, requests arriving together all wait for the one restore (none finds the keys locked)', async () => {
    const { store, ib } = await storeWithTwoKeys();
    const session = memorySession();
    await new UnlockCache(store, session).unlock('passphrase-two', 60_000);
    const restarted = new UnlockCache(store, session);
    const seen = await Promise.all([restarted.keys(), restarted.keys(), restarted.expiresAt()]);
    assert.deepEqual([...seen[0].keys()], [ib.fingerprint]);
    assert.deepEqual([...seen[1].keys()], [ib.fingerprint]);
    assert.ok(seen[2]! > Date.now());
  });

  it('keeps the unlocked keys in the session area, never the passphrase, and restores them without it', async () => {
    const { store, ib } = await storeWithTwoKeys();
    const session = memorySession();
    await new UnlockCache(store, session).unlock('passphrase-two', 60_000);
    const mirrored = JSON.stringify(session.data);
    assert.doesNotMatch(mirrored, /passphrase-two/);
    assert.doesNotMatch(mirrored, /passphrase/i, 'no field holds a passphrase either');
    // A restarted background gets the key back without the store (no passphrase, no Argon2 run).
    const noStore = {
      list: async () => store.list(),
      unlock: async (): Promise<never> => assert.fail('restored by unlocking with a passphrase'),
    };
    const restarted = new UnlockCache(noStore, session);
    const keys = await restarted.keys();
    assert.deepEqual([...keys.keys()], [ib.fingerprint]);
    assert.ok(keys.get(ib.fingerprint)!.isDecrypted());
  });

  it('restricts the session area to the extension before writing to it', async () => {
    const { store } = await storeWithTwoKeys();
    const session = memorySession();
    await new UnlockCache(store, session).unlock('passphrase-one', 60_000);
    assert.equal(session.log[0], 'TRUSTED_CONTEXTS', `first call: ${session.log.join(', ')}`);
    assert.ok(session.log.includes('set'));
  });

  it('keeps the search index key while a key is unlocked, and drops it with the last one', async () => {
    const { store } = await storeWithTwoKeys();
    const session = memorySession();
    const cache = new UnlockCache(store, session);
    await cache.setIndexKey(new Uint8Array(32).fill(7));
    assert.equal(await cache.indexKey(), undefined, 'not kept while locked');
    await cache.unlock('passphrase-one', 60_000);
    await cache.setIndexKey(new Uint8Array(32).fill(7));
    assert.deepEqual(await new UnlockCache(store, session).indexKey(), new Uint8Array(32).fill(7), 'restored');
    await cache.lock();
    assert.equal(await cache.indexKey(), undefined);
    assert.deepEqual(session.data, {});
  });

  it('expires by an alarm that wakes a stopped background: keys, index key and session go, the background is told', async () => {
    const { store } = await storeWithTwoKeys();
    let clock = 1_000_000;
    const session = memorySession();
    const alarms = memoryAlarms();
    const cache = new UnlockCache(store, session, () => clock, alarms);
    await cache.unlock('passphrase-one', 5 * 60_000);
    await cache.setIndexKey(new Uint8Array(32).fill(1));
    assert.equal(alarms.set.get(EXPIRY_ALARM), clock + 5 * 60_000, 'the alarm is set at the expiry');

    // The background is stopped (its timer dies with it); the alarm starts a new one past the expiry.
    clearTimeout((cache as unknown as { timer: ReturnType<typeof setTimeout> }).timer);
    clock += 5 * 60_000;
    let told = 0;
    const woken = new UnlockCache(
      store,
      session,
      () => clock,
      alarms,
      () => told++,
    );
    await woken.expire();
    await Promise.resolve();
    assert.equal(told, 1, 'the background learns the keys expired (to clear views, close the index)');
    assert.equal((await woken.keys()).size, 0);
    assert.equal(await woken.indexKey(), undefined);
    assert.deepEqual(session.data, {}, 'nothing left in the session area');
    assert.equal(alarms.set.has(EXPIRY_ALARM), false);

    // Lock clears the alarm too.
    await woken.unlock('passphrase-one', 60_000);
    assert.ok(alarms.set.has(EXPIRY_ALARM));
    await woken.lock();
    assert.equal(alarms.set.has(EXPIRY_ALARM), false);
  });
});
