// The client's package log checks against the provider's own PackageLog,
// cosigned by real witnesses (litewitness processes, scripts/test/witnesses.ts),
// served over HTTP by the provider's own handler. A misbehaving provider is a
// second log under the same key (a fork) or an old checkpoint it kept (a
// rollback), served at the same address; a colluding witness operator is a
// second litewitness process with the witness's key and a fresh database.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { entryLeafHash, type LogEntry, type ProofBundle } from '../../protocol/package-log.js';
import { formatCheckpoint } from '../../protocol/checkpoint.js';
import { formatNote, parseNote, signEd25519 } from '../../protocol/signed-note.js';
import { cosigners, type WitnessPolicy } from '../../protocol/witness-policy.js';
import { createHttpHandler, type ServedLog } from '../../provider-server/src/http.js';
import { LogWitnesses } from '../../provider-server/src/log-witnesses.js';
import { createMetrics } from '../../provider-server/src/metrics.js';
import { LOG_KEY_FILE, PackageLog } from '../../provider-server/src/package-log.js';
import { tempDir } from '../../scripts/test/temp-dir.js';
import { TestWitnesses, type TestWitness } from '../../scripts/test/witnesses.js';
import {
  compareHeads,
  PackageLogAlert,
  PackageLogVerifier,
  parseFingerprint,
  type LegacyTrust,
  type LogTrust,
  type PackageLogAlertKind,
  type TrustStore,
} from '../core/package-log.js';
import { MerkleTree } from '../../protocol/merkle.js';
import { bytesToHex } from '@noble/hashes/utils.js';

const entry = (version: number, hashByte: string): LogEntry => ({
  modelId: 'spam',
  version,
  packageSha256: hashByte.repeat(32),
  createdAt: `2025-01-0${version}T00:00:00.000Z`,
});
const V1 = entry(1, 'a1');
const V2 = entry(2, 'b2');

let witnesses: TestWitnesses;
let w: TestWitness[];
/** A second process with w[2]'s key and its own state: its operator cosigns anything. */
let twin: TestWitness;
let keyDir: string;
let server: http.Server;
let base: string;
/** What the provider serves at `base` right now. */
let served: ServedLog;

const policy = (quorum: number, ws = w): WitnessPolicy => ({ quorum, witnesses: ws.map((x) => x.vkey) });
const POLICY = (): WitnessPolicy => policy(2);

before(async () => {
  witnesses = await TestWitnesses.start();
  w = [
    await witnesses.add('w1.example/witness'),
    await witnesses.add('w2.example/witness'),
    await witnesses.add('w3.example/witness'),
  ];
  twin = await witnesses.add('w3.example/witness', w[2]);
  keyDir = tempDir('pmf-clog-');
  const log = PackageLog.open(keyDir); // creates the provider's log key
  for (const x of [...w, twin]) x.addLog(log.origin, log.vkey);
  honest = logOf([]);
  server = http.createServer(
    createHttpHandler({
      metrics: createMetrics(),
      models: () => [],
      packageLog: {
        get vkey() {
          return served.vkey;
        },
        document: () => served.document(),
        bundle: (q) => served.bundle(q),
        signedCheckpoint: () => served.signedCheckpoint(),
      },
    }),
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

after(async () => {
  server?.close();
  await witnesses?.close();
});

/** A log under the provider's key holding exactly these entries (its file written directly, as a rogue provider could). */
function logOf(entries: LogEntry[]): PackageLog {
  const d = tempDir('pmf-clog-');
  fs.copyFileSync(path.join(keyDir, LOG_KEY_FILE), path.join(d, LOG_KEY_FILE));
  fs.chmodSync(path.join(d, LOG_KEY_FILE), 0o600);
  const log = PackageLog.open(d);
  log.record(entries);
  return log;
}

/** The honest log, grown to these entries and cosigned by all three witnesses; each head's cosigned note by size. */
let honest: PackageLog;
const noteAt = new Map<number, string>();
async function publish(entries: LogEntry[]): Promise<PackageLog> {
  honest.record(entries);
  const outcomes = await new LogWitnesses(honest, w).cosign();
  assert.deepEqual(
    outcomes.map((o) => ('error' in o ? o.error : 'ok')),
    w.map(() => 'ok'),
  );
  noteAt.set(honest.size, honest.signedCheckpoint());
  served = honest;
  return honest;
}

/** The honest log with its answers changed as a rogue provider could. */
function tampered(change: { bundle?: (b: ProofBundle) => ProofBundle; note?: (n: string) => string }): ServedLog {
  const note = (n: string) => change.note?.(n) ?? n;
  return {
    vkey: honest.vkey,
    document: () => ({ ...honest.document(), checkpoint: note(honest.signedCheckpoint()) }),
    bundle: (q) => {
      const b = { ...honest.bundle(q), checkpoint: note(honest.signedCheckpoint()) };
      return change.bundle?.(b) ?? b;
    },
    signedCheckpoint: () => note(honest.signedCheckpoint()),
  };
}

class MemoryTrust implements TrustStore {
  readonly map = new Map<string, LogTrust | LegacyTrust>();
  async get(origin: string) {
    return this.map.get(origin);
  }
  async put(origin: string, t: LogTrust) {
    this.map.set(origin, t);
  }
}

const device = (p: () => WitnessPolicy = POLICY, pinnedKey?: string, trust = new MemoryTrust()) =>
  new PackageLogVerifier({ baseUrl: base, trust, policy: p, pinnedKey });

async function alerts(kind: PackageLogAlertKind, p: Promise<unknown>, message?: RegExp): Promise<void> {
  await assert.rejects(p, (e: unknown) => {
    assert.ok(e instanceof PackageLogAlert, String(e));
    assert.equal(e.kind, kind, e.message);
    if (message) assert.match(e.message, message);
    return true;
  });
}

async function withServed<T>(log: ServedLog, f: () => Promise<T>): Promise<T> {
  served = log;
  try {
    return await f();
  } finally {
    served = honest;
  }
}

const E2 = entry(2, 'e2');

test('an honest log cosigned by all three witnesses passes a 2-of-3 policy, and grows with consistency proofs', async () => {
  const log = await publish([V1]);
  for (const x of w) assert.deepEqual(x.state(log.origin), { size: 1, root: bytesToHex(log.checkpoint.root) }, x.name);
  const trust = new MemoryTrust();
  const verifier = device(POLICY, undefined, trust);
  const first = await verifier.checkLogged('spam', 1, V1.packageSha256);
  assert.equal(first.firstUse, true);
  assert.deepEqual(
    first.trust.cosigners.map((c) => c.name),
    w.map((x) => x.name),
  );
  assert.ok(first.trust.cosigners.every((c) => Math.abs(c.time - Date.now() / 1000) < 600));
  await publish([V2]);
  const next = await verifier.checkLogged('spam', 2, V2.packageSha256);
  assert.deepEqual([next.trust.size, next.firstUse], [2, false]);
  assert.equal([...trust.map.values()][0].size, 2, 'the new head is recorded');
});

test('a forked log served to one client is refused: honest witnesses do not cosign it, one colluding witness is not 2 of 3', async () => {
  await publish([V1, V2]);
  const seen = device();
  await seen.checkLogged('spam', 1, V1.packageSha256);
  const blind = device(() => policy(0));
  await blind.checkLogged('spam', 1, V1.packageSha256);

  // The provider's fork: the same key and origin, version 2 with another package (a targeted model).
  const fork = logOf([V1, E2]);
  const outcomes = await new LogWitnesses(fork, [w[0], w[1], twin]).cosign();
  assert.match((outcomes[0] as { error: string }).error, /inconsistent with size 2 it cosigned before/);
  assert.match((outcomes[1] as { error: string }).error, /inconsistent with size 2/);
  assert.ok('time' in outcomes[2], 'the colluding twin cosigns the fork');
  assert.deepEqual(
    cosigners(parseNote(fork.signedCheckpoint()), POLICY()).map((c) => c.name),
    ['w3.example/witness'],
  );

  await withServed(fork, async () => {
    // A new device (nothing recorded) and a device that saw the honest head both refuse it.
    await alerts('not_witnessed', device().checkLogged('spam', 2, E2.packageSha256), /cosigned by 1 of the 2/);
    await alerts('not_witnessed', seen.checkLogged('spam', 2, E2.packageSha256));
    // The colluding cosignature is real: a policy needing one witness would take the fork.
    await device(() => policy(1)).checkLogged('spam', 2, E2.packageSha256);
    // Without witnesses only a device that saw the honest head notices, by its consistency proof.
    await alerts('log_forked', blind.checkLogged('spam', 2, E2.packageSha256), /does not extend 2:/);
    await device(() => policy(0)).checkLogged('spam', 2, E2.packageSha256);
  });
});

test('a rolled-back head is refused, though its cosignatures are valid', async () => {
  await publish([V1, V2]);
  const verifier = device();
  await verifier.checkLogged('spam', 2, V2.packageSha256);
  const old = logOf([V1]); // the head of size 1, with the cosignatures it had then
  const rolledBack: ServedLog = {
    vkey: old.vkey,
    document: () => ({ ...old.document(), checkpoint: noteAt.get(1)! }),
    bundle: (q) => ({ ...old.bundle(q), checkpoint: noteAt.get(1)! }),
    signedCheckpoint: () => noteAt.get(1)!,
  };
  await withServed(rolledBack, async () => {
    await device().checkLogged('spam', 1, V1.packageSha256); // valid for a device that never saw more
    await alerts(
      'rolled_back',
      verifier.checkLogged('spam', 1, V1.packageSha256),
      /has 1 entries, but this device saw 2/,
    );
  });
});

test('a package the log does not list, or lists with another hash, or whose proof does not verify, is refused', async () => {
  await publish([V1, V2]);
  const v = device();
  await alerts('not_in_log', v.checkLogged('spam', 3, 'c3'.repeat(32)), /is not in the package log/);
  await alerts('not_in_log', v.checkLogged('spam', 2, 'c3'.repeat(32)), /is not the logged one/);
  await alerts('not_in_log', v.checkLogged('topics', 1, V1.packageSha256));
  const flip = (p: string[]) => p.map((h, i) => (i === 0 ? `${h[0] === 'A' ? 'B' : 'A'}${h.slice(1)}` : h));
  const badInclusion = tampered({
    bundle: (b) => ({ ...b, inclusion: b.inclusion && { ...b.inclusion, proof: flip(b.inclusion.proof) } }),
  });
  await withServed(badInclusion, () =>
    alerts('not_in_log', device().checkLogged('spam', 1, V1.packageSha256), /does not verify/),
  );
  const otherIndex = tampered({
    bundle: (b) => ({ ...b, inclusion: b.inclusion && { ...b.inclusion, index: 1 - b.inclusion.index } }),
  });
  await withServed(otherIndex, () => alerts('not_in_log', device().checkLogged('spam', 1, V1.packageSha256)));
  // A device that saw size 1 and is sent a broken consistency proof to size 2.
  const trust = new MemoryTrust();
  const root1 = bytesToHex(new MerkleTree([V1].map(entryLeafHash)).root());
  await trust.put(new URL(base).origin, {
    logKey: honest.vkey,
    keySource: 'first-use',
    size: 1,
    root: root1,
    checkedAt: 0,
    cosigners: [],
  });
  const badConsistency = tampered({
    bundle: (b) => ({ ...b, consistency: b.consistency && { ...b.consistency, proof: flip(b.consistency.proof) } }),
  });
  await withServed(badConsistency, () =>
    alerts('log_forked', device(POLICY, undefined, trust).checkLogged('spam', 2, V2.packageSha256)),
  );
  await device(POLICY, undefined, trust).checkLogged('spam', 2, V2.packageSha256); // the honest proof verifies
});

test('a bad log signature, another log key, or another origin is refused; a pinned key is recorded as configured', async () => {
  await publish([V1, V2]);
  const flipSig = tampered({
    note: (n) => n.replace(/(\n\n\u2014 \S+ )(.)/u, (_, a: string, c: string) => a + (c === 'A' ? 'B' : 'A')),
  });
  await withServed(flipSig, () => alerts('bad_signature', device().checkLogged('spam', 1, V1.packageSha256)));
  const otherKey = PackageLog.open(tempDir('pmf-clog-')); // another key: a fresh data directory
  otherKey.record([V1, V2]);
  await withServed(otherKey, () =>
    alerts('key_changed', device(POLICY, honest.vkey).checkLogged('spam', 1, V1.packageSha256), /is signed by/),
  );
  const recorded = new MemoryTrust();
  await device(POLICY, undefined, recorded).checkLogged('spam', 1, V1.packageSha256);
  await withServed(otherKey, () =>
    alerts('key_changed', device(POLICY, undefined, recorded).checkLogged('spam', 1, V1.packageSha256)),
  );
  // The same key under another origin (another log the provider runs), named as the trusted log.
  const d = tempDir('pmf-clog-');
  fs.copyFileSync(path.join(keyDir, LOG_KEY_FILE), path.join(d, LOG_KEY_FILE));
  fs.chmodSync(path.join(d, LOG_KEY_FILE), 0o600);
  const otherOrigin = PackageLog.open(d, 'other.example/pmf-package-log');
  otherOrigin.record([V1, V2]);
  const renamed: ServedLog = {
    vkey: honest.vkey,
    document: () => ({ ...otherOrigin.document(), logKey: honest.vkey }),
    bundle: (q) => ({ ...otherOrigin.bundle(q), logKey: honest.vkey }),
    signedCheckpoint: () => otherOrigin.signedCheckpoint(),
  };
  await withServed(renamed, () =>
    alerts('key_changed', device(() => policy(0)).checkLogged('spam', 1, V1.packageSha256), /is of log other.example/),
  );
  const pinned = await device(POLICY, honest.vkey).checkLogged('spam', 1, V1.packageSha256);
  assert.equal(pinned.trust.keySource, 'configured');
  await alerts(
    'key_changed',
    device(POLICY, otherKey.vkey, recorded).checkLogged('spam', 1, V1.packageSha256),
    /not the key recorded/,
  );
  assert.throws(() => device(POLICY, 'ab'.repeat(32)), /now the log’s verifier key/);
});

test('a device that recorded a hash-chain log (format 1) keeps its key and its size across the move to the Merkle log', async () => {
  await publish([V1, V2]);
  const legacy = (publicKey: string, size: number): MemoryTrust => {
    const t = new MemoryTrust();
    t.map.set(new URL(base).origin, { publicKey, keySource: 'first-use', size, head: 'ff'.repeat(32) });
    return t;
  };
  const key = bytesToHex(honest.publicKey);
  const moved = await device(POLICY, undefined, legacy(key, 2)).checkLogged('spam', 1, V1.packageSha256);
  assert.deepEqual([moved.trust.logKey, moved.trust.size, moved.trust.keySource], [honest.vkey, 2, 'first-use']);
  await alerts(
    'key_changed',
    device(POLICY, undefined, legacy('00'.repeat(32), 2)).checkLogged('spam', 1, V1.packageSha256),
  );
  await alerts('rolled_back', device(POLICY, undefined, legacy(key, 3)).checkLogged('spam', 1, V1.packageSha256));
});

test('audit: every entry checked against the cosigned head; entries that do not hash to it, or a version with two hashes, alert', async () => {
  await publish([V1, V2]);
  assert.deepEqual((await device().audit()).entries, [V1, V2]);
  const badHead = tampered({});
  badHead.document = () => ({ ...honest.document(), entries: [V1, E2] });
  await withServed(badHead, () => alerts('bad_head', device().audit()));
  // A provider that logged version 1 a second time with another package: signed as it stands.
  const entries = [V1, V2, entry(1, 'f1')];
  const text = formatCheckpoint({
    origin: honest.origin,
    size: 3,
    root: new MerkleTree(entries.map(entryLeafHash)).root(),
    extensions: [],
  });
  const seed = new Uint8Array(fs.readFileSync(path.join(keyDir, LOG_KEY_FILE)));
  const checkpoint = formatNote({ text, signatures: [signEd25519(text, honest.origin, seed)] });
  const twice: ServedLog = { ...tampered({}), document: () => ({ ...honest.document(), checkpoint, entries }) };
  await withServed(twice, () =>
    alerts('hash_changed', device(() => policy(0)).audit(), /logged with two package hashes/),
  );
});

test('gossip: identical, older and newer honest heads are consistent; another head of the same size is a fork', async () => {
  const log = await publish([V1, V2]);
  const entries = log.document().entries;
  const t = new MerkleTree(entries.map(entryLeafHash));
  assert.equal(compareHeads(entries, parseFingerprint(log.fingerprint)), 'same');
  assert.equal(compareHeads(entries, { size: 1, head: bytesToHex(t.root(1)) }), 'other-behind');
  assert.equal(compareHeads(entries.slice(0, 1), parseFingerprint(log.fingerprint)), 'other-ahead');
  assert.throws(
    () => compareHeads(entries, parseFingerprint(logOf([V1, E2]).fingerprint)),
    (e: unknown) => e instanceof PackageLogAlert && e.kind === 'log_forked',
  );
  assert.throws(() => parseFingerprint('2:abc'), /not a package log fingerprint/);
});

test('a provider that answers with more than a proof bundle or a log can hold is refused before parsing', async () => {
  await publish([V1, V2]);
  const padded = tampered({ bundle: (b) => ({ ...b, padding: 'x'.repeat(70_000) }) as ProofBundle });
  await withServed(padded, () =>
    assert.rejects(device().checkLogged('spam', 1, V1.packageSha256), /larger than 65536 bytes/),
  );
});
