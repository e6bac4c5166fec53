// Kept spam and topic requests read back from the device's store (client/core/kept-requests.ts):
// an intact one is ready to re-send with the same labels; a damaged one is
// dropped, so that the message is asked anew instead of failing every run.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import {
  KEPT_FOR_MS,
  runJournal,
  topicJournal,
  type KeptSpamRequest,
  type KeptStore,
  type KeptTopicRequest,
} from '../core/kept-requests.js';
import { loadHe } from '../../wasm/ts/he.js';
import { KeptDirectory } from '../node/node-storage.js';

const T = 26;

function store<R = KeptSpamRequest>(records: Record<string, unknown>): KeptStore<R> & { ids(): string[] } {
  const m = new Map(Object.entries(records) as [string, R][]);
  return {
    get: async (id) => m.get(id),
    put: async (id, k) => void m.set(id, structuredClone(k)),
    delete: async (id) => void m.delete(id),
    ids: () => [...m.keys()],
  };
}

const record = (messageId: string, labels: Uint8Array, t = T, answer?: unknown): KeptSpamRequest => ({
  request: { messageId, lwe: new Uint8Array(8), choices: new Uint8Array(4) },
  evaluation: { T: t, labels },
  answer: answer as Uint8Array | undefined,
});

test('an intact kept request resumes with its request and labels; damaged ones are dropped', async () => {
  const { core } = await loadHe();
  const labels = new Uint8Array(randomBytes(16 * T));
  const kept = store({
    good: record('good', labels),
    answered: record('answered', labels, T, new Uint8Array([7, 7])),
    badAnswer: record('badAnswer', labels, T, 'not bytes'),
    short: record('short', labels.subarray(1)),
    width: record('width', new Uint8Array(16 * 99), 99),
    moved: record('elsewhere', labels),
    empty: { request: undefined, evaluation: undefined },
  });
  const journal = runJournal(core, kept);
  const good = await journal.resume('good');
  assert.deepEqual(good?.request, record('good', labels).request);
  assert.deepEqual(good?.pending?.consume(), labels);
  assert.equal(good?.extra.answer, undefined);
  assert.deepEqual((await journal.resume('answered'))?.extra.answer, new Uint8Array([7, 7]));
  for (const id of ['short', 'width', 'moved', 'empty', 'badAnswer'])
    assert.equal(await journal.resume(id), undefined, id);
  assert.equal(await journal.resume('never-kept'), undefined);
  assert.deepEqual(kept.ids(), ['good', 'answered'], 'damaged records are gone; intact ones stay until forgotten');
  await journal.forget('good');
  await journal.forget('answered');
  assert.deepEqual(kept.ids(), []);
});

test('the CLI keeps requests in files of its own, per account; a damaged file is dropped', async () => {
  const { core } = await loadHe();
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-kept-'));
  try {
    const dir = new KeptDirectory(cache, 'http://127.0.0.1:1', 'token-a');
    const other = new KeptDirectory(cache, 'http://127.0.0.1:1', 'token-b');
    const labels = new Uint8Array(randomBytes(16 * T));
    const k = record('m1@x', labels);
    await dir.put('m1@x', k);
    assert.deepEqual(await dir.get('m1@x'), k);
    const answered = record('m1@x', labels, T, new Uint8Array([1, 2, 3]));
    await dir.put('m1@x', answered);
    assert.deepEqual(await dir.get('m1@x'), answered, 'with the answer once it arrived');
    assert.equal(await other.get('m1@x'), undefined, 'another account does not see it');
    await dir.blindKeys.put('m1@x', new Uint8Array(32).fill(9));
    assert.deepEqual(await dir.blindKeys.get('m1@x'), new Uint8Array(32).fill(9), 'a blinding key beside it');
    assert.deepEqual(await dir.get('m1@x'), answered, 'apart from the request');
    await dir.blindKeys.delete('m1@x');
    assert.equal(await dir.blindKeys.get('m1@x'), undefined);
    const [file] = fs
      .readdirSync(path.join(cache, 'kept-requests'), { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile());
    assert.equal(fs.statSync(path.join(file.parentPath, file.name)).mode & 0o077, 0, 'readable by the user alone');

    // Unsettled past KEPT_FOR_MS: the next run's directory drops it; a fresh one stays.
    await dir.put('stale@x', k);
    await dir.blindKeys.put('stale@x', new Uint8Array(32));
    const files = () => fs.readdirSync(file.parentPath).sort();
    const fresh = files();
    const weekAgo = (Date.now() - KEPT_FOR_MS - 60_000) / 1000;
    for (const f of fresh.filter((f) => !f.startsWith(path.basename(file.name, '.json'))))
      fs.utimesSync(path.join(file.parentPath, f), weekAgo, weekAgo);
    new KeptDirectory(cache, 'http://127.0.0.1:1', 'token-a');
    assert.deepEqual(files(), [file.name]);
    assert.equal(fresh.length, 3);

    fs.writeFileSync(path.join(file.parentPath, file.name), '{"messageId": "m1@x", "lwe"');
    assert.equal(await runJournal(core, dir).resume('m1@x'), undefined);
    assert.equal(await dir.get('m1@x'), undefined, 'the damaged file is gone');
  } finally {
    fs.rmSync(cache, { recursive: true, force: true });
  }
});

/** A topic request over n = 3 candidates, K = 5 index bits. */
const topicRecord = (
  messageId: string,
  labels: Uint8Array,
  over: Partial<KeptTopicRequest> = {},
): KeptTopicRequest => ({
  request: { messageId, lwes: new Uint8Array(8), choices: new Uint8Array(4) },
  evaluation: { T, n: 3, K: 5, labels },
  replay: { messageId, contentHash: 'ab'.repeat(32) },
  localGuess: 'sci.space',
  ...over,
});

test('a kept topic request resumes with its replay entry and guess; damaged ones are dropped', async () => {
  const { core } = await loadHe();
  const labels = new Uint8Array(randomBytes(16 * 3 * (T + 5)));
  const kept = store<KeptTopicRequest>({
    good: topicRecord('good', labels, { answer: new Uint8Array([5]) }),
    shape: topicRecord('shape', labels, { evaluation: { T, n: 4, K: 5, labels } }),
    spam: topicRecord('spam', labels.subarray(0, 16 * T), { evaluation: { T, labels: labels.subarray(0, 16 * T) } }),
    replay: topicRecord('replay', labels, { replay: { messageId: 'elsewhere', contentHash: 'ab'.repeat(32) } }),
    guess: topicRecord('guess', labels, { localGuess: 7 as unknown as string }),
  });
  const journal = topicJournal(core, kept);
  const good = await journal.resume('good');
  assert.deepEqual(good?.pending?.consume(), labels);
  assert.deepEqual(good?.extra, {
    replay: topicRecord('good', labels).replay,
    localGuess: 'sci.space',
    answer: new Uint8Array([5]),
  });
  for (const id of ['shape', 'spam', 'replay', 'guess']) assert.equal(await journal.resume(id), undefined, id);
  assert.deepEqual(kept.ids(), ['good']);

  // The CLI's files: topic requests beside the spam requests of the same message, neither read as the other.
  const cache = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-kept-'));
  try {
    const dir = new KeptDirectory(cache, 'http://127.0.0.1:1', 'token-a');
    const k = topicRecord('m1@x', labels, { answer: new Uint8Array([1, 2]) });
    await dir.topics.put('m1@x', k);
    assert.equal(await dir.get('m1@x'), undefined);
    assert.deepEqual(await dir.topics.get('m1@x'), k);
    assert.deepEqual((await topicJournal(core, dir.topics).resume('m1@x'))?.pending?.consume(), labels);
    await dir.topics.delete('m1@x');
    assert.equal(await dir.topics.get('m1@x'), undefined);
  } finally {
    fs.rmSync(cache, { recursive: true, force: true });
  }
});
