// Stored messages in chunks (doc-chunks.ts): one AES-GCM record per chunk,
// removed text leaves its chunk, and stores written by version 1 (one record
// per message, written here by hand from the format README.md specified)
// still open, answer and update.
import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openDB, type IDBPDatabase } from 'idb';
import { openMailSearch } from '../../search/index.js';
import { CHUNK_DOCS } from '../../search/doc-chunks.js';
import { makeDocs, queries, Reference } from './corpus.js';

const newKey = () => crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
let n = 0;
const freshName = () => `stored-messages-${process.pid}-${n++}`;
const utf8 = new TextEncoder();
const KEYS_AAD = 'pmf-search/v1|meta|keys';
/** Format 2's AAD of the wrapped keys binds the header: here a caller's key, no KDF. */
const KEYS_AAD_2 = 'pmf-search/v2|meta|keys|format=2|kdf=none';

async function seal(key: CryptoKey, aad: string, plaintext: Uint8Array<ArrayBuffer>) {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  return {
    iv,
    ct: await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: utf8.encode(aad) }, key, plaintext),
  };
}

/** The database's data key and tag key, unwrapped with the caller's key (as the index does). */
async function dataKeys(db: IDBPDatabase, master: CryptoKey) {
  const wrapped = (await db.get('meta', 'keys')) as { iv: Uint8Array<ArrayBuffer>; ct: ArrayBuffer };
  const { format } = (await db.get('meta', 'header')) as { format: number };
  const raw = new Uint8Array(
    await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: wrapped.iv, additionalData: utf8.encode(format === 1 ? KEYS_AAD : KEYS_AAD_2) },
      master,
      wrapped.ct,
    ),
  );
  const data = await crypto.subtle.importKey('raw', raw.slice(0, 32), 'AES-GCM', false, ['encrypt', 'decrypt']);
  const tag = await crypto.subtle.importKey('raw', raw.slice(32), { name: 'HMAC', hash: 'SHA-256' }, false, ['sign']);
  return { data, tag };
}

/** Every chunk's plaintext, decrypted with the data key. */
async function chunkPlaintexts(name: string, master: CryptoKey): Promise<string[]> {
  const db = await openDB(name);
  const { data } = await dataKeys(db, master);
  const out: string[] = [];
  for (const key of (await db.getAllKeys('chunks')) as number[]) {
    const rec = (await db.get('chunks', key)) as { iv: Uint8Array<ArrayBuffer>; ct: ArrayBuffer };
    const pt = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: rec.iv, additionalData: utf8.encode(`chunk|${key}`) },
      data,
      rec.ct,
    );
    out.push(new TextDecoder().decode(pt));
  }
  db.close();
  return out;
}

describe('stored messages', () => {
  it('are encrypted one chunk of CHUNK_DOCS per AES-GCM call', async () => {
    const s = await openMailSearch({ dbName: freshName(), key: await newKey() });
    const subtle = crypto.subtle;
    const encrypt = subtle.encrypt.bind(subtle);
    let calls = 0;
    subtle.encrypt = (...args: Parameters<SubtleCrypto['encrypt']>) => {
      calls++;
      return encrypt(...args);
    };
    try {
      await s.addMany(makeDocs(1, 100));
    } finally {
      subtle.encrypt = encrypt;
    }
    assert.equal(calls, Math.ceil(100 / CHUNK_DOCS));
    assert.equal(await s.count(), 100);
    await s.close();
  });

  it('are found by the id tag WebCrypto computes: base64url(HMAC-SHA256(id)[:16])', async () => {
    const name = freshName();
    const key = await newKey();
    // Ids of 0 to 200 UTF-8 bytes (across SHA-256's 55/56/64-byte padding edges), non-ASCII too.
    const ids = [
      ...Array.from({ length: 200 }, (_, i) => `${'x'.repeat(i)}#`),
      'é',
      '<CAF+Zx=8@mail.example.com>',
      '日本語のメール',
      '😀 mail',
    ];
    const s = await openMailSearch({ dbName: name, key });
    await s.addMany(ids.map((id, i) => ({ id, from: 'a@b.example', subject: 's', date: i, body: 'text' })));
    await s.add({ id: 'queued one', from: 'a@b.example', subject: 's', date: 1, body: 'text' });
    await s.close();
    const db = await openDB(name);
    const { tag } = await dataKeys(db, key);
    const rows = (await db.getAll('docs')) as { h: string }[];
    db.close();
    const expected = await Promise.all(
      [...ids, 'queued one'].map(async (id) =>
        Buffer.from(new Uint8Array(await crypto.subtle.sign('HMAC', tag, utf8.encode(id))).subarray(0, 16)).toString(
          'base64url',
        ),
      ),
    );
    assert.deepEqual(
      rows.map((r) => r.h),
      expected,
    );
  });

  it('leave no removed or replaced text in their chunk; the rest of it stays readable', async () => {
    const name = freshName();
    const key = await newKey();
    const docs = makeDocs(2, 40);
    docs[5] = { ...docs[5], body: `${docs[5].body} aardvark` };
    docs[7] = { ...docs[7], body: `${docs[7].body} bandicoot` };
    let s = await openMailSearch({ dbName: name, key });
    await s.addMany(docs);
    await s.close();
    const before = await chunkPlaintexts(name, key);
    assert.ok(before.some((c) => c.includes('aardvark')) && before.some((c) => c.includes('bandicoot')), 'sanity');

    s = await openMailSearch({ dbName: name, key });
    assert.equal(await s.remove(docs[5].id), true);
    await s.add({ ...docs[7], body: 'replaced' });
    await s.flush();
    const ref = new Reference();
    for (const d of docs) if (d !== docs[5]) ref.add(d === docs[7] ? { ...d, body: 'replaced' } : d);
    let found = 0;
    for (const terms of queries(3, 10)) {
      const hits = await s.search(terms.join(' '), 1000);
      assert.deepEqual(new Set(hits.map((h) => h.id)), ref.matching(terms));
      assert.ok(
        hits.every((h) => h.snippet.length > 0),
        'every hit has its snippet from its chunk',
      );
      found += hits.length;
    }
    assert.ok(found > 0, 'sanity: the queries find mail');
    await s.close();
    const after = await chunkPlaintexts(name, key);
    assert.ok(!after.some((c) => c.includes('aardvark') || c.includes('bandicoot')), 'old text left in a chunk');
    assert.ok(!after.some((c) => c.includes(`"${docs[5].id}"`)), 'the removed id left in a chunk');
  });
});

describe('a store written by version 1 (one record per message)', () => {
  it('opens, answers with snippets, and replaces and removes its messages', async () => {
    const name = freshName();
    const master = await newKey();
    const docs = makeDocs(4, 30);

    // Version 1's layout: IndexedDB version 1, stores meta/docs/shards, each message
    // {h, iv, ct} under its seq with AAD doc|<seq>|<h>, h = base64url(HMAC-SHA256(id)[:16]).
    const db = await openDB(name, 1, {
      upgrade(d) {
        d.createObjectStore('meta');
        d.createObjectStore('docs').createIndex('h', 'h', { unique: true });
        d.createObjectStore('shards');
      },
    });
    const raw = crypto.getRandomValues(new Uint8Array(64));
    await db.put('meta', { format: 1, kdf: null }, 'header');
    await db.put('meta', await seal(master, KEYS_AAD, raw), 'keys');
    const { data, tag } = await dataKeys(db, master);
    const manifest = { sealedUpTo: 0, nextShardId: 1, shards: [] };
    await db.put('meta', await seal(data, 'meta|manifest', utf8.encode(JSON.stringify(manifest))), 'manifest');
    const tagOf = async (id: string) => {
      const mac = new Uint8Array(await crypto.subtle.sign('HMAC', tag, utf8.encode(id))).subarray(0, 16);
      return Buffer.from(mac).toString('base64url');
    };
    for (const [seq, d] of docs.entries()) {
      const h = await tagOf(d.id);
      await db.put('docs', { h, ...(await seal(data, `doc|${seq}|${h}`, utf8.encode(JSON.stringify(d)))) }, seq);
    }
    db.close();

    let s = await openMailSearch({ dbName: name, key: master });
    const ref = new Reference();
    for (const d of docs) ref.add(d);
    const check = async () => {
      let found = 0;
      for (const terms of queries(5, 10)) {
        const hits = await s.search(terms.join(' '), 1000);
        assert.deepEqual(new Set(hits.map((h) => h.id)), ref.matching(terms));
        assert.ok(hits.every((h) => h.snippet.length > 0));
        found += hits.length;
      }
      assert.ok(found > 0, 'sanity: the queries find mail');
    };
    await check();
    assert.equal(await s.has(docs[0].id), true);
    assert.equal(await s.remove(docs[1].id), true);
    ref.remove(docs[1].id);
    const replacement = { ...docs[0], body: `${docs[0].body} w1` };
    await s.add(replacement);
    ref.add(replacement);
    await s.addMany(makeDocs(5, 3, 'new'));
    for (const d of makeDocs(5, 3, 'new')) ref.add(d);
    await check();
    assert.equal(await s.count(), 30 - 1 + 3);
    await s.close();

    s = await openMailSearch({ dbName: name, key: master });
    await check();
    await s.close();
    const after = await openDB(name);
    const keys = (await after.getAllKeys('docs')) as number[];
    after.close();
    assert.ok(!keys.includes(0) && !keys.includes(1), "the replaced and the removed message's records are gone");
  });
});
