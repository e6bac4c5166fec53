// The index's plaintext header (how its key is derived) against whoever can
// write the browser profile: its iteration count is bounded before any work,
// it is bound into the wrapped keys' AAD, and an index of format 1 (header
// bound to nothing) is migrated to format 2 when first opened.
import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { openDB } from 'idb';
import { MailSearchError, openMailSearch, PBKDF2_ITERATIONS } from '../../search/index.js';
import { makeDocs } from './corpus.js';

let n = 0;
const freshName = () => `index-header-${process.pid}-${n++}`;
const utf8 = new TextEncoder();
const newKey = () => crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
const PASS = 'index passphrase';

async function editHeader(name: string, edit: (h: { format: number; kdf: { iterations: number } | null }) => void) {
  const db = await openDB(name);
  const header = await db.get('meta', 'header');
  edit(header);
  await db.put('meta', header, 'header');
  db.close();
}

const rejectsWith = (p: Promise<unknown>, code: string) =>
  assert.rejects(p, (e: unknown) => e instanceof MailSearchError && e.code === code);

/** A passphrase index holding one message, and the key its passphrase derived. */
async function passphraseIndex(name: string): Promise<Uint8Array<ArrayBuffer> | undefined> {
  let derived: Uint8Array<ArrayBuffer> | undefined;
  const s = await openMailSearch({ dbName: name, passphrase: PASS, onDerivedKey: (raw) => (derived = raw) });
  await s.addMany(makeDocs(1, 1));
  await s.close();
  return derived;
}

describe('search index header', () => {
  it('refuses an iteration count above the bound (10 times ours) before deriving anything', async () => {
    const name = freshName();
    await passphraseIndex(name);
    await editHeader(name, (h) => (h.kdf!.iterations = 10 * PBKDF2_ITERATIONS + 1));
    await rejectsWith(openMailSearch({ dbName: name, passphrase: PASS }), 'integrity');
    await editHeader(name, (h) => (h.kdf!.iterations = 2 ** 31 - 1));
    await rejectsWith(openMailSearch({ dbName: name, passphrase: PASS }), 'integrity');
  });

  it('opens with the derived key instead of the passphrase, and not once the header changed', async () => {
    const name = freshName();
    const derived = await passphraseIndex(name);
    assert.equal(derived?.length, 32, 'the passphrase gave its derived key');
    const s = await openMailSearch({ dbName: name, derivedKey: derived! });
    assert.equal((await s.search(makeDocs(1, 1)[0].subject.split(' ')[0])).length, 1);
    await s.close();
    // Within the bounds, and a key that was derived before: only the AAD binding notices.
    await editHeader(name, (h) => (h.kdf!.iterations = PBKDF2_ITERATIONS + 1));
    await rejectsWith(openMailSearch({ dbName: name, derivedKey: derived! }), 'wrong-key');
    await editHeader(name, (h) => (h.kdf!.iterations = PBKDF2_ITERATIONS));
    (await openMailSearch({ dbName: name, derivedKey: derived! })).close();
  });

  it('migrates a format 1 index (keys bound to nothing) to format 2, which then refuses a downgraded header', async () => {
    const name = freshName();
    const master = await newKey();
    // Format 1 as version 1 wrote it, sealed here with WebCrypto directly.
    const db = await openDB(name, 2, {
      upgrade(d) {
        d.createObjectStore('meta');
        d.createObjectStore('docs').createIndex('h', 'h', { unique: true });
        d.createObjectStore('shards');
        d.createObjectStore('chunks');
      },
    });
    const seal = async (key: CryptoKey, aad: string, plaintext: Uint8Array<ArrayBuffer>) => {
      const iv = crypto.getRandomValues(new Uint8Array(12));
      return {
        iv,
        ct: await crypto.subtle.encrypt({ name: 'AES-GCM', iv, additionalData: utf8.encode(aad) }, key, plaintext),
      };
    };
    const raw = crypto.getRandomValues(new Uint8Array(64));
    const data = await crypto.subtle.importKey('raw', raw.slice(0, 32), 'AES-GCM', false, ['encrypt']);
    const manifest = { sealedUpTo: 0, nextShardId: 1, shards: [] };
    await db.put('meta', { format: 1, kdf: null }, 'header');
    await db.put('meta', await seal(master, 'pmf-search/v1|meta|keys', raw), 'keys');
    await db.put('meta', await seal(data, 'meta|manifest', utf8.encode(JSON.stringify(manifest))), 'manifest');
    db.close();

    const doc = makeDocs(1, 1)[0];
    let s = await openMailSearch({ dbName: name, key: master });
    await s.add(doc);
    await s.close();
    const after = await openDB(name);
    assert.deepEqual(await after.get('meta', 'header'), { format: 2, kdf: null }, 'rewritten as format 2');
    after.close();
    s = await openMailSearch({ dbName: name, key: master });
    assert.equal(await s.has(doc.id), true, 'nothing lost');
    await s.close();
    // Put back format 1: the wrapped keys are now bound to format 2 and refuse it.
    await editHeader(name, (h) => (h.format = 1));
    await rejectsWith(openMailSearch({ dbName: name, key: master }), 'wrong-key');
  });
});
