// The client's package log checks against logs produced by the provider's own
// PackageLog; a misbehaving provider is simulated by editing its log file (or
// running two logs with one key) and letting it re-sign what it now holds.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { logFingerprint, type LogEntry, type PackageLogDocument } from '../../protocol/package-log.js';
import { LOG_FILE, LOG_KEY_FILE, PackageLog } from '../../provider-server/src/package-log.js';
import {
  checkLogged,
  compareHeads,
  PackageLogAlert,
  parseFingerprint,
  verifyLog,
  type LogTrust,
  type PackageLogAlertKind,
} from '../core/package-log.js';

let dir: string;
let keyFile: string;
let n = 0;

before(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-clog-'));
  keyFile = path.join(dir, LOG_KEY_FILE);
  PackageLog.open(dir); // creates the provider's log key
});
after(() => fs.rmSync(dir, { recursive: true, force: true }));

const entry = (version: number, hashByte: string, createdAt = `2025-01-0${version}T00:00:00.000Z`): LogEntry => ({
  modelId: 'spam',
  version,
  packageSha256: hashByte.repeat(32),
  createdAt,
});
const V1 = entry(1, 'a1');
const V2 = entry(2, 'b2');

/** The provider's signed log holding exactly these entries (its log file written directly, as a rogue provider could). */
function served(entries: LogEntry[], key = keyFile): PackageLogDocument {
  const d = path.join(dir, `log${n++}`);
  fs.mkdirSync(d);
  fs.copyFileSync(key, path.join(d, LOG_KEY_FILE));
  fs.chmodSync(path.join(d, LOG_KEY_FILE), 0o600);
  fs.writeFileSync(path.join(d, LOG_FILE), entries.map((e) => `${JSON.stringify(e)}\n`).join(''));
  return PackageLog.open(d).document();
}

function alerts(kind: PackageLogAlertKind, f: () => unknown): void {
  assert.throws(f, (e: unknown) => e instanceof PackageLogAlert && e.kind === kind);
}

test('first contact trusts the log key and records the head; a pinned key is recorded as configured', () => {
  const doc = served([V1]);
  assert.deepEqual(verifyLog(doc, undefined), {
    publicKey: doc.publicKey,
    keySource: 'first-use',
    size: 1,
    head: doc.head,
  });
  assert.equal(verifyLog(doc, undefined, doc.publicKey).keySource, 'configured');
});

test('a legitimate new version passes: the log grew and the old head is its prefix', () => {
  const trust = verifyLog(served([V1]), undefined);
  const grown = served([V1, V2]);
  const next = verifyLog(grown, trust);
  assert.deepEqual([next.size, next.head], [2, grown.head]);
  checkLogged(grown.entries, 'spam', 2, V2.packageSha256);
});

test('a bad signature is refused, and so is a log signed by another key than the pinned one', () => {
  const doc = served([V1]);
  const flipped = { ...doc, signature: (doc.signature[0] === '0' ? '1' : '0') + doc.signature.slice(1) };
  alerts('bad_signature', () => verifyLog(flipped, undefined));
  alerts('bad_signature', () => verifyLog({ ...doc, signature: 'ff'.repeat(64) }, undefined));

  const otherKey = path.join(dir, 'other.key');
  fs.writeFileSync(otherKey, new Uint8Array(32).fill(7), { mode: 0o600 });
  const impostor = served([V1], otherKey);
  alerts('key_changed', () => verifyLog(impostor, undefined, doc.publicKey));
  alerts('key_changed', () => verifyLog(impostor, verifyLog(doc, undefined)));
});

test('entries that do not hash to the signed head are refused', () => {
  const doc = served([V1, V2]);
  alerts('bad_head', () => verifyLog({ ...doc, entries: [V1, entry(2, 'c3')] }, undefined));
});

test('a forked log (another head of the same size) is detected, by this device and by gossip', () => {
  const mine = served([V1]);
  const trust = verifyLog(mine, undefined);
  const fork = served([entry(1, 'e1')]); // what a targeted user is shown
  alerts('log_forked', () => verifyLog(fork, trust));
  alerts('log_forked', () => compareHeads(mine.entries, parseFingerprint(logFingerprint(fork.size, fork.head))));
});

test('gossip: identical, older and newer honest heads are consistent', () => {
  const small = served([V1]);
  const big = served([V1, V2]);
  assert.equal(compareHeads(big.entries, parseFingerprint(logFingerprint(2, big.head))), 'same');
  assert.equal(compareHeads(big.entries, { size: 1, head: small.head }), 'other-behind');
  assert.equal(compareHeads(small.entries, parseFingerprint(logFingerprint(2, big.head))), 'other-ahead');
  assert.throws(() => parseFingerprint('2:abc'), /not a package log fingerprint/);
});

test('a log that rewrites an old entry is detected even when it also grows', () => {
  const trust = verifyLog(served([V1, V2]), undefined);
  const rewritten = served([entry(1, 'a1', '2024-12-31T00:00:00.000Z'), V2, entry(3, 'c3')]);
  alerts('log_forked', () => verifyLog(rewritten, trust));
});

test('a log that shrinks is detected', () => {
  const trust = verifyLog(served([V1, V2]), undefined);
  alerts('log_shrunk', () => verifyLog(served([V1]), trust));
});

test('a hash change without a version bump alerts, even on first contact', () => {
  const trust = verifyLog(served([V1]), undefined);
  const changed = served([V1, entry(1, 'f1')]); // appended, so the old head is still a prefix
  alerts('hash_changed', () => verifyLog(changed, trust));
  alerts('hash_changed', () => verifyLog(changed, undefined));
});

test('a package whose hash is absent from the log is refused', () => {
  const doc = served([V1, V2]);
  alerts('not_in_log', () => checkLogged(doc.entries, 'spam', 3, 'c3'.repeat(32)));
  alerts('not_in_log', () => checkLogged(doc.entries, 'spam', 2, 'c3'.repeat(32)));
  alerts('not_in_log', () => checkLogged(doc.entries, 'topics', 1, V1.packageSha256));
});

test('a recorded key that differs from the configured one is an alert, not a silent switch', () => {
  const doc = served([V1]);
  const recorded: LogTrust = { ...verifyLog(doc, undefined), publicKey: '00'.repeat(32) };
  alerts('key_changed', () => verifyLog(doc, recorded, doc.publicKey));
});
