// The provider's package log: its files, its signed checkpoints (opened by Go's
// x/mod note as an independent reader), its HTTP endpoints, and the start-up
// check that refuses a log that no longer matches its signed checkpoint.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { test } from 'node:test';
import { parseCheckpoint } from '../../protocol/checkpoint.js';
import { MerkleTree, verifyConsistency, verifyInclusion } from '../../protocol/merkle.js';
import {
  decodeProof,
  entryLeafHash,
  LOG_CHECKPOINT_PATH,
  LOG_KEY_PATH,
  LOG_PATH,
  LOG_PROOF_PATH,
  type LogEntry,
  type ProofBundle,
} from '../../protocol/package-log.js';
import { parseNote, parseVerifierKey, verifyEd25519 } from '../../protocol/signed-note.js';
import { goReference } from '../../protocol/test/tlog-vectors.js';
import { createHttpHandler } from '../src/http.js';
import { createMetrics } from '../src/metrics.js';
import { CHECKPOINT_FILE, LOG_FILE, LOG_KEY_FILE, PackageLog } from '../src/package-log.js';
import { tempDir } from '../../scripts/test/temp-dir.js';

const entry = (version: number, hashByte = 'aa'): LogEntry => ({
  modelId: 'spam',
  version,
  packageSha256: hashByte.repeat(32),
  createdAt: new Date(version * 1000).toISOString(),
});

/** A data directory whose log holds versions 1..n (signed at each open). */
function logWith(n: number): string {
  const dir = tempDir('pmf-log-');
  PackageLog.open(dir).record(Array.from({ length: n }, (_, i) => entry(i + 1, (0xa0 + i).toString(16))));
  return dir;
}

test('first open creates a 0600 log key; the log appends once per version, signs each head and survives a restart', () => {
  const dir = tempDir('pmf-log-');
  const log = PackageLog.open(dir);
  assert.equal(fs.statSync(path.join(dir, LOG_KEY_FILE)).mode & 0o777, 0o600, 'log key file mode');
  assert.deepEqual(log.record([entry(1), entry(2, 'bb')]), [entry(1), entry(2, 'bb')]);
  assert.deepEqual(log.record([entry(1), entry(2, 'bb')]), [], 'already logged versions are not appended again');

  const note = parseNote(log.signedCheckpoint());
  const cp = parseCheckpoint(note.text);
  assert.deepEqual([cp.origin, cp.size], [log.origin, 2]);
  assert.deepEqual(cp.root, new MerkleTree([entry(1), entry(2, 'bb')].map(entryLeafHash)).root());
  assert.ok(verifyEd25519(note, parseVerifierKey(log.vkey)));
  const secret = fs.readFileSync(path.join(dir, LOG_KEY_FILE)).toString('hex');
  for (const f of [LOG_FILE, CHECKPOINT_FILE])
    assert.ok(!fs.readFileSync(path.join(dir, f)).toString('hex').includes(secret), `no secret in ${f}`);
  assert.ok(!JSON.stringify(log.document()).includes(secret));

  const again = PackageLog.open(dir);
  assert.equal(again.vkey, log.vkey, 'same key after a restart');
  assert.equal(again.signedCheckpoint(), log.signedCheckpoint(), 'same signed head after a restart');
});

test('the checkpoint the provider signs opens with Go’s x/mod note.Open under the key it publishes', () => {
  const log = PackageLog.open(logWith(3));
  const go = goReference<{ ok: boolean; text: string }>('open', { note: log.signedCheckpoint(), vkeys: [log.vkey] });
  assert.equal(go.ok, true);
  assert.equal(go.text, parseNote(log.signedCheckpoint()).text);
});

test('a published version whose package hash changed is refused, not re-logged', () => {
  const log = PackageLog.open(tempDir('pmf-log-'));
  log.record([entry(1)]);
  assert.throws(() => log.record([entry(1, 'cc')]), /spam v1: package c+ differs from the logged a+/);
  assert.equal(log.size, 1);
});

test('bundles: the inclusion proof of each entry and the consistency proof from every older size verify', () => {
  const log = PackageLog.open(logWith(7));
  const cp = parseCheckpoint(parseNote(log.signedCheckpoint()).text);
  const tree = new MerkleTree(log.document().entries.map(entryLeafHash));
  for (let v = 1; v <= 7; v++) {
    const b = log.bundle({ modelId: 'spam', version: v, old: v });
    const inc = b.inclusion!;
    assert.equal(inc.entry.version, v);
    assert.ok(verifyInclusion(entryLeafHash(inc.entry), inc.index, cp.size, decodeProof(inc.proof, 'p'), cp.root));
    if (v < 7) {
      assert.equal(b.consistency!.from, v);
      assert.ok(verifyConsistency(v, 7, tree.root(v), cp.root, decodeProof(b.consistency!.proof, 'p')));
    } else assert.equal(b.consistency, undefined, 'no proof from the current size');
  }
  const none = log.bundle({ modelId: 'topics', version: 1, old: 99 });
  assert.deepEqual([none.inclusion, none.consistency], [undefined, undefined], 'out of range: no proofs');
});

/** One open of a damaged copy: the error it refuses with. */
function refusal(damage: (dir: string) => void, n = 3): string {
  const dir = logWith(n);
  damage(dir);
  try {
    PackageLog.open(dir);
  } catch (e) {
    assert.equal((e as Error).name, 'BrokenLogError', (e as Error).message);
    return (e as Error).message;
  }
  return assert.fail('a damaged log was opened');
}

const lines = (dir: string): string[] => fs.readFileSync(path.join(dir, LOG_FILE), 'utf8').split('\n');
const write = (dir: string, ls: string[]): void => fs.writeFileSync(path.join(dir, LOG_FILE), ls.join('\n'));

test('start-up: an edited, reordered, truncated or duplicated log file is refused, naming what is wrong', () => {
  const edited = refusal((d) =>
    write(
      d,
      lines(d).map((l, i) => (i === 1 ? l.replace(/a1a1/g, 'b1b1') : l)),
    ),
  );
  assert.match(
    edited,
    /package-log.jsonl was edited: its first 3 entries hash to 3:\w+, not to the signed checkpoint 3:\w+/,
  );
  const reordered = refusal((d) => write(d, [lines(d)[1], lines(d)[0], ...lines(d).slice(2)]));
  assert.match(reordered, /was edited/);
  assert.match(
    refusal((d) => write(d, lines(d).slice(1))),
    /has 2 entries but the signed checkpoint covers 3: entries were removed/,
  );
  const dup = refusal((d) => fs.appendFileSync(path.join(d, LOG_FILE), `${JSON.stringify(entry(2, 'ee'))}\n`));
  assert.match(dup, /line 4 logs spam v2 again \(first on line 2\)/);
  assert.match(
    refusal((d) => fs.appendFileSync(path.join(d, LOG_FILE), '{"modelId":1}\n')),
    /line 4: modelId must match/,
  );
});

test('start-up: a replaced or missing log key, a changed origin and a damaged checkpoint are refused', () => {
  const replaced = refusal((d) => {
    fs.rmSync(path.join(d, LOG_KEY_FILE));
    fs.writeFileSync(path.join(d, LOG_KEY_FILE), new Uint8Array(32).fill(9), { mode: 0o600 });
  });
  assert.match(replaced, /package-log.checkpoint is not signed by package-log.key .*: the log key was replaced/);
  assert.match(
    refusal((d) => fs.rmSync(path.join(d, LOG_KEY_FILE))),
    /package-log.key is missing but the log already has 3 entries/,
  );
  const dir = logWith(1);
  assert.throws(
    () => PackageLog.open(dir, 'mail.example.org/pmf-package-log'),
    /is the checkpoint of log pmf-package-log\/\w+, but this provider's log is mail.example.org\/pmf-package-log/,
  );
  const damaged = refusal((d) => fs.appendFileSync(path.join(d, CHECKPOINT_FILE), 'garbage'));
  assert.match(damaged, /package-log.checkpoint is damaged \(malformed signed note/);
  fs.chmodSync(path.join(dir, LOG_KEY_FILE), 0o644);
  assert.throws(() => PackageLog.open(dir), /must be 600/);
});

test('start-up: a log of the hash-chain format (no checkpoint) is signed as it stands; entries past the checkpoint are signed', () => {
  const old = logWith(2);
  fs.rmSync(path.join(old, CHECKPOINT_FILE));
  const migrated = PackageLog.open(old);
  assert.equal(parseCheckpoint(parseNote(migrated.signedCheckpoint()).text).size, 2);
  // A crash between appending an entry and signing its head leaves an entry the checkpoint does not cover yet.
  fs.appendFileSync(path.join(old, LOG_FILE), `${JSON.stringify(entry(3, 'cc'))}\n`);
  assert.equal(parseCheckpoint(parseNote(PackageLog.open(old).signedCheckpoint()).text).size, 3);
});

test('the log is served at well-known URLs: the whole log (revalidated), proofs, the checkpoint and the key', async () => {
  const log = PackageLog.open(logWith(1));
  const handler = createHttpHandler({ metrics: createMetrics(), models: () => [], packageLog: log });
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const r = await fetch(base + LOG_PATH);
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('cache-control'), 'no-cache');
    assert.deepEqual(await r.json(), log.document());
    const etag = r.headers.get('etag')!;
    assert.equal((await fetch(base + LOG_PATH, { headers: { 'if-none-match': etag } })).status, 304);
    log.record([entry(2, 'bb')]);
    const grown = await fetch(base + LOG_PATH, { headers: { 'if-none-match': etag } });
    assert.equal(grown.status, 200, 'a new version changes the checkpoint, so the old ETag no longer matches');

    const proof = (await (await fetch(`${base}${LOG_PROOF_PATH}?old=1&model=spam&version=2`)).json()) as ProofBundle;
    assert.deepEqual(proof, log.bundle({ old: 1, modelId: 'spam', version: 2 }));
    assert.equal((await fetch(`${base}${LOG_PROOF_PATH}?old=-1`)).status, 400);
    assert.equal((await fetch(`${base}${LOG_PROOF_PATH}?model=../x`)).status, 400);
    const cp = await fetch(base + LOG_CHECKPOINT_PATH);
    assert.equal(cp.headers.get('content-type'), 'text/plain; charset=utf-8');
    assert.equal(await cp.text(), log.signedCheckpoint());
    assert.deepEqual(await (await fetch(base + LOG_KEY_PATH)).json(), {
      format: 'pmf-package-log/2',
      logKey: log.vkey,
    });
  } finally {
    server.close();
  }
});
