// Protection at rest and failure behaviour: nothing readable on disk, wrong
// keys and tampering detected with clear errors, quota and bad input leave the
// previous state intact.
import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { openDB } from 'idb';
import { openMailSearch, SHARD_SIZE, type MailSearch } from '../../search/index.js';
import { makeDocs } from './corpus.js';
import { failNthPut, rejectsWith } from './storage-faults.js';

const newKey = () => crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
let n = 0;
const freshName = () => `at-rest-${process.pid}-${n++}`;

const SECRET_WORD = 'quixotically';
const SECRET_ID = '<merger-talks@acme.example>';

async function seeded(name: string, key: CryptoKey, sealed = true): Promise<MailSearch> {
  const s = await openMailSearch({ dbName: name, key });
  await s.addMany(makeDocs(3, sealed ? SHARD_SIZE + 10 : 10));
  await s.add({
    id: SECRET_ID,
    from: 'ceo@acme.example',
    subject: 'Merger',
    date: 1,
    body: `We proceed ${SECRET_WORD}.`,
  });
  return s;
}

/** Every byte IndexedDB holds for this database (keys and values, recursively). */
async function rawDump(name: string): Promise<Uint8Array[]> {
  const db = await openDB(name);
  const out: Uint8Array[] = [];
  const walk = (v: unknown): void => {
    if (v instanceof ArrayBuffer) out.push(new Uint8Array(v));
    else if (ArrayBuffer.isView(v)) out.push(new Uint8Array(v.buffer, v.byteOffset, v.byteLength));
    else if (typeof v === 'string' || typeof v === 'number') out.push(new TextEncoder().encode(String(v)));
    else if (v && typeof v === 'object') Object.values(v).forEach(walk);
  };
  for (const store of db.objectStoreNames) {
    for (let c = await db.transaction(store).store.openCursor(); c; c = await c.continue()) {
      walk(c.key);
      walk(c.value);
    }
  }
  db.close();
  return out;
}

function contains(hay: Uint8Array, needle: Uint8Array): boolean {
  outer: for (let i = 0; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return true;
  }
  return false;
}

/** Flips one byte of the ciphertext stored under store/key. */
async function flipByte(name: string, store: string, key: IDBValidKey): Promise<void> {
  const db = await openDB(name);
  const rec = await db.get(store, key);
  const ct = new Uint8Array(rec.ct.slice(0));
  ct[ct.length >> 1] ^= 0x01;
  await db.put(store, { ...rec, ct: ct.buffer }, key);
  db.close();
}

describe('search index at rest', () => {
  const open: MailSearch[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });

  it('stores no plaintext word, id or address', async () => {
    const name = freshName();
    const s = await seeded(name, await newKey());
    assert.equal((await s.search(SECRET_WORD)).length, 1, 'sanity: the word is indexed');
    await s.close();
    const enc = new TextEncoder();
    const needles = [SECRET_WORD, 'quixot', SECRET_ID, 'acme.example', 'w12 '].map((w) => enc.encode(w));
    for (const chunk of await rawDump(name)) {
      for (const needle of needles) assert.ok(!contains(chunk, needle), 'plaintext found in IndexedDB');
    }
  });

  it('rejects a wrong key with a clear error and leaves the index usable', async () => {
    const name = freshName();
    const key = await newKey();
    await (await seeded(name, key, false)).close();
    await rejectsWith(openMailSearch({ dbName: name, key: await newKey() }), 'wrong-key', /wrong key or passphrase/i);
    const s = await openMailSearch({ dbName: name, key });
    open.push(s);
    assert.equal((await s.search(SECRET_WORD)).length, 1);
  });

  it('derives the key from a passphrase and rejects a wrong one', async () => {
    const name = freshName();
    const s = await openMailSearch({ dbName: name, passphrase: 'correct horse battery staple' });
    await s.add({ id: 'a', from: 'x', subject: 'hello', date: 1, body: SECRET_WORD });
    await s.close();
    await rejectsWith(openMailSearch({ dbName: name, passphrase: 'correct horse battery stapler' }), 'wrong-key');
    await rejectsWith(openMailSearch({ dbName: name, key: await newKey() }), 'bad-input', /passphrase/);
    const again = await openMailSearch({ dbName: name, passphrase: 'correct horse battery staple' });
    open.push(again);
    assert.equal((await again.search(SECRET_WORD)).length, 1);
  });

  it('refuses to open without a key, or with an unusable one', async () => {
    await rejectsWith(openMailSearch({ dbName: freshName() }), 'no-key');
    const hmac = await crypto.subtle.generateKey({ name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
    await rejectsWith(openMailSearch({ dbName: freshName(), key: hmac }), 'bad-input', /AES-GCM/);
  });

  for (const [what, store, key] of [
    ['a chunk of messages', 'chunks', SHARD_SIZE],
    ['a sealed shard', 'shards', 1],
    ['the manifest', 'meta', 'manifest'],
  ] as const) {
    it(`detects a flipped byte in ${what}`, async () => {
      const name = freshName();
      const k = await newKey();
      await (await seeded(name, k)).close();
      await flipByte(name, store, key);
      // Opening reads the manifest and hot messages; searching reads shards and hits.
      const attempt = (async () => {
        const s = await openMailSearch({ dbName: name, key: k });
        open.push(s);
        await s.search('w1', 1000);
        await s.search(SECRET_WORD);
      })();
      await rejectsWith(attempt, 'integrity', /failed authentication/);
    });
  }

  it('detects a chunk moved to another address (AAD binds the record key)', async () => {
    const name = freshName();
    const k = await newKey();
    await (await seeded(name, k)).close();
    const db = await openDB(name);
    await db.put('chunks', await db.get('chunks', SHARD_SIZE), SHARD_SIZE + 10);
    db.close();
    await rejectsWith(openMailSearch({ dbName: name, key: k }), 'integrity', /chunk\|1010 failed authentication/);
  });

  it("detects message rows swapped (a chunk names each message's tag)", async () => {
    const name = freshName();
    const k = await newKey();
    await (await seeded(name, k)).close();
    const db = await openDB(name);
    const [a, b] = [await db.get('docs', 0), await db.get('docs', 1)];
    await db.put('docs', { ...a, h: 'placeholder' }, 0); // the tag index is unique
    await db.put('docs', { ...b, h: a.h }, 1);
    await db.put('docs', { ...a, h: b.h }, 0);
    db.close();
    const s = await openMailSearch({ dbName: name, key: k });
    open.push(s);
    // The snippets read every hit's stored message: message 0 is a hit for its own subject.
    const [first] = makeDocs(3, 1);
    await rejectsWith(s.search(first.subject, 1000), 'integrity', /doc\|[01] does not match its chunk/);
  });
});

describe('search index failures keep the previous state', () => {
  const open: MailSearch[] = [];
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });

  async function snapshot(s: MailSearch): Promise<string> {
    const hits = await s.search('w1 w2', 1000);
    return JSON.stringify([await s.count(), hits.map((h) => h.id).sort()]);
  }

  it('a quota error while adding writes nothing, in memory or on disk', async () => {
    const name = freshName();
    const key = await newKey();
    const s = await seeded(name, key, false);
    open.push(s);
    const before = await snapshot(s);
    const restore = failNthPut(2); // the first chunk is written, the messages' rows fail
    try {
      await rejectsWith(s.addMany(makeDocs(9, 5, 'q')), 'quota', /nothing was changed/);
    } finally {
      restore();
    }
    assert.equal(await snapshot(s), before);
    await s.close();
    const reopened = await openMailSearch({ dbName: name, key });
    open.push(reopened);
    assert.equal(await snapshot(reopened), before);
    await reopened.addMany(makeDocs(9, 5, 'q'));
    assert.equal(await reopened.count(), JSON.parse(before)[0] + 5, 'works again once space is back');
  });

  it('a quota error while sealing a shard loses nothing and sealing resumes later', async () => {
    const name = freshName();
    const key = await newKey();
    const s = await openMailSearch({ dbName: name, key });
    open.push(s);
    const docs = makeDocs(4, SHARD_SIZE);
    await s.addMany(docs.slice(0, SHARD_SIZE - 1));
    const before = await snapshot(s);
    const restore = failNthPut(3); // the message's chunk and row ok, then the shard record fails
    try {
      await s.addMany(docs.slice(SHARD_SIZE - 1)); // the message is stored; only the seal is deferred
    } finally {
      restore();
    }
    const st = await s.stats();
    assert.equal(st.sealedShards, 0, 'no half-written shard');
    assert.equal(st.count, SHARD_SIZE);
    assert.notEqual(await snapshot(s), before);
    assert.equal((await s.search(docs[SHARD_SIZE - 1].body.split(' ').join(' '))).length >= 1, true);
    await s.close();
    const reopened = await openMailSearch({ dbName: name, key });
    open.push(reopened);
    assert.equal(await reopened.count(), SHARD_SIZE);
    await reopened.add(makeDocs(5, 1, 'z')[0]);
    assert.equal((await reopened.stats()).sealedShards, 1, 'sealing resumes on the next add');
  });

  it('rejects malformed messages before writing any of the batch', async () => {
    const s = await openMailSearch({ dbName: freshName(), key: await newKey() });
    open.push(s);
    const good = makeDocs(6, 3);
    const bad: unknown[] = [
      { ...good[0], id: '' },
      { ...good[0], date: 'not a date' },
      { ...good[0], body: 42 },
      { ...good[0], subject: undefined },
      null,
    ];
    for (const b of bad) {
      await rejectsWith(s.addMany([...good, b as never]), 'bad-input');
      assert.equal(await s.count(), 0);
    }
    await rejectsWith(s.search('x'.repeat(5000)), 'bad-input');
    await rejectsWith(s.search('w1', 0), 'bad-input');
    await rejectsWith(s.remove(''), 'bad-input');
  });

  it('indexes a huge message up to the documented cut', async () => {
    const s = await openMailSearch({ dbName: freshName(), key: await newKey() });
    open.push(s);
    const body = `early ${'filler '.repeat(40_000)} beyondthecut`;
    await s.add({ id: 'huge', from: 'a', subject: 'big', date: 1, body });
    assert.equal((await s.search('early')).length, 1);
    assert.equal((await s.search('beyondthecut')).length, 0);
  });

  it('refuses use after close', async () => {
    const s = await openMailSearch({ dbName: freshName(), key: await newKey() });
    await s.close();
    await rejectsWith(s.search('x'), 'closed');
  });
});
