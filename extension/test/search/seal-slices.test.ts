// Sealing a full hot shard builds its compact form in slices of the thread
// (slices.ts). These tests hold the seal to what queries rely on: a query
// asked while a shard is being sealed is answered before the seal ends, and
// finds the messages of that shard; a seal cut off by the end of the process
// loses nothing; a build in slices equals one at once.
import 'fake-indexeddb/auto';
import assert from 'node:assert/strict';
import { afterEach, describe, it, mock } from 'node:test';
import { openMailSearch, SHARD_SIZE, type MailDoc, type MailSearch } from '../../search/index.js';
import { indexable, validateDoc } from '../../search/mail-doc.js';
import { ShardBuilder } from '../../search/shard-builder.js';

const newKey = () => crypto.subtle.generateKey({ name: 'AES-GCM', length: 256 }, false, ['encrypt', 'decrypt']);
let n = 0;
const freshName = () => `seal-slices-${process.pid}-${n++}`;
const nextTask = () => new Promise((resolve) => setImmediate(resolve));

/**
 * A shard's worth of messages, 30 words each of their own (~30,000 terms: a
 * build of many slices); only the last one says "kumquat".
 */
const docs: MailDoc[] = Array.from({ length: SHARD_SIZE }, (_, i) => ({
  id: `m${i}`,
  from: 'a@b.test',
  subject: `subject ${i}`,
  date: 1_600_000_000_000 + i * 60_000,
  body: Array.from({ length: 30 }, (_, j) => `t${i}x${j}`).join(' ') + (i === SHARD_SIZE - 1 ? ' kumquat' : ''),
}));
const last = docs[SHARD_SIZE - 1];

/** Builds in progress (ShardBuilder#buildInSlices), counted by a spy. */
function countBuilds(): { running: () => number; started: () => number } {
  const original = ShardBuilder.prototype.buildInSlices;
  let running = 0;
  let started = 0;
  mock.method(ShardBuilder.prototype, 'buildInSlices', async function (this: ShardBuilder) {
    running++;
    started++;
    try {
      return await original.call(this);
    } finally {
      running--;
    }
  });
  return { running: () => running, started: () => started };
}

/** An index whose hot shard lacks one message to be full, every shard in memory (queries run beside the writer). */
async function almostFull(name: string, key: CryptoKey): Promise<MailSearch> {
  const s = await openMailSearch({ dbName: name, key });
  await s.addMany(docs.slice(0, SHARD_SIZE - 1));
  assert.deepEqual(await s.search('kumquat'), []);
  return s;
}

describe('sealing a hot shard in slices', () => {
  const open: MailSearch[] = [];
  afterEach(async () => {
    mock.restoreAll();
    await Promise.all(open.splice(0).map((s) => s.close().catch(() => undefined)));
  });

  it('answers queries while it seals, and they find the messages of the shard being sealed', async () => {
    const builds = countBuilds();
    const s = await almostFull(freshName(), await newKey());
    open.push(s);
    await s.add(last);
    let sealed = false;
    const flushed = s.flush().then(() => void (sealed = true)); // writes the message, then seals the full shard
    while (builds.started() === 0) await nextTask();
    let duringBuild = 0;
    let queries = 0;
    while (!sealed) {
      const building = builds.running() > 0;
      const hits = await s.search('kumquat');
      assert.deepEqual(
        hits.map((h) => h.id),
        [last.id],
        `query ${queries} (${building ? 'while building' : 'building done'}, sealed: ${sealed})`,
      );
      if (building && builds.running() > 0) duringBuild++; // answered before the build went on
      queries++;
      await nextTask();
    }
    await flushed;
    assert.ok(duringBuild >= 2, `${duringBuild} queries answered in the middle of the build, want several`);
    const st = await s.stats();
    assert.equal(st.sealedShards, 1);
    assert.equal(st.hotDocs, 0);
    assert.deepEqual(
      (await s.search('kumquat')).map((h) => h.id),
      [last.id],
      'found in the sealed shard',
    );
  });

  it('loses nothing when the process ends in the middle of a seal, and seals again later', async () => {
    const builds = countBuilds();
    const name = freshName();
    const key = await newKey();
    const s = await almostFull(name, key);
    open.push(s);
    await s.add(last);
    const flushed = s.flush();
    while (builds.started() === 0) await nextTask();
    // The process dies: its connection is gone, so the seal's write fails.
    (s as unknown as { db: { close(): void } }).db.close();
    await flushed.catch(() => undefined);
    assert.equal(builds.started(), 1);

    const reopened = await openMailSearch({ dbName: name, key });
    open.push(reopened);
    let st = await reopened.stats();
    assert.deepEqual([st.count, st.sealedShards, st.hotDocs], [SHARD_SIZE, 0, SHARD_SIZE]);
    assert.deepEqual(
      (await reopened.search('kumquat')).map((h) => h.id),
      [last.id],
    );
    await reopened.add({ ...last, id: 'next', body: 'kumquat again' });
    await reopened.flush();
    st = await reopened.stats();
    assert.deepEqual([st.count, st.sealedShards, st.hotDocs], [SHARD_SIZE + 1, 1, 1]);
    assert.deepEqual((await reopened.search('kumquat')).map((h) => h.id).sort(), [last.id, 'next']);
  });

  it('builds in slices what it builds at once', async () => {
    const at = new ShardBuilder();
    const sliced = new ShardBuilder();
    docs.forEach((d, seq) => {
      const doc = indexable(validateDoc(d, seq), seq);
      at.add(doc);
      sliced.add(doc);
    });
    const building = sliced.buildInSlices();
    assert.throws(() => sliced.add(indexable(validateDoc(last, 0), SHARD_SIZE)), /while it builds/);
    assert.deepEqual((await building).serialize(), at.build().serialize());
  });
});
