// The provider and its witnesses, real litewitness processes: a provider
// configured with them starts with its head cosigned, a new version is cosigned
// through a consistency proof, and what an operator would hit (a witness that
// does not know the log, one that is down, a data directory restored from an
// older backup) is said in plain words without stopping the provider. A log
// that no longer matches its signed checkpoint stops the start.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { after, before, test } from 'node:test';
import { bytesToHex } from '@noble/hashes/utils.js';
import { parseNote } from '../../protocol/signed-note.js';
import { cosigners } from '../../protocol/witness-policy.js';
import { LogWitnesses } from '../src/log-witnesses.js';
import { LOG_FILE, LOG_KEY_FILE, PackageLog } from '../src/package-log.js';
import { startProvider } from '../src/provider.js';
import { tempDir } from '../../scripts/test/temp-dir.js';
import { TestWitnesses, type TestWitness } from '../../scripts/test/witnesses.js';
import { loopbackConfig } from './real-provider.js';

let witnesses: TestWitnesses;
let w: TestWitness[];
let stranger: TestWitness;

before(async () => {
  witnesses = await TestWitnesses.start();
  w = [await witnesses.add('w1.example/witness'), await witnesses.add('w2.example/witness')];
  stranger = await witnesses.add('w3.example/witness');
});
after(() => witnesses?.close());

const quiet = { progress: () => undefined };
const entry = (version: number, hashByte: string) => ({
  modelId: 'blocklist-test',
  version,
  packageSha256: hashByte.repeat(32),
  createdAt: new Date(version * 1000).toISOString(),
});

/** A data directory whose log key the witnesses in `knownBy` were given (as `provider-server log-key` prints it). */
function dataDirKnownBy(knownBy: TestWitness[]): string {
  const dir = tempDir('pmf-wlog-');
  const log = PackageLog.open(dir);
  for (const x of knownBy) x.addLog(log.origin, log.vkey);
  return dir;
}

const witnessConfig = (ws: TestWitness[]) => ({
  witnesses: ws.map((x) => ({ url: x.url, vkey: x.vkey })),
  refreshSeconds: 3600,
});

test('a provider configured with witnesses starts with its head cosigned by them, and serves the cosignatures', async () => {
  const dir = dataDirKnownBy(w);
  const lines: string[] = [];
  const p = await startProvider(loopbackConfig(dir, { packageLog: witnessConfig(w) }), {
    ...quiet,
    log: (l) => lines.push(l),
  });
  try {
    const note = await (await fetch(`${p.server.httpUrl}/.well-known/pmf-package-log/checkpoint`)).text();
    assert.deepEqual(
      cosigners(parseNote(note), { quorum: 2, witnesses: w.map((x) => x.vkey) }).map((c) => c.name),
      w.map((x) => x.name),
    );
    for (const x of w)
      assert.deepEqual(
        x.state(p.packageLog.origin),
        { size: 1, root: bytesToHex(p.packageLog.checkpoint.root) },
        x.name,
      );
    assert.ok(
      lines.some((l) => l === `package log: witness w1.example/witness cosigned ${p.packageLog.fingerprint}`),
      lines.join('\n'),
    );
  } finally {
    await p.close();
  }
  // A new version after a restart: the witnesses cosign the longer log from the size they saw.
  const log = PackageLog.open(dir);
  log.record([entry(1, 'b1')]);
  const outcomes = await new LogWitnesses(log, witnessConfig(w).witnesses).cosign();
  assert.deepEqual(
    outcomes.map((o) => ('time' in o ? 'ok' : o.error)),
    ['ok', 'ok'],
  );
  for (const x of w) assert.equal(x.state(log.origin)?.size, 2);
});

test('a witness that does not know the log, or is down, is reported; the others still cosign', async () => {
  const dir = dataDirKnownBy(w);
  const log = PackageLog.open(dir);
  log.record([entry(1, 'c1')]);
  const down = { url: 'http://127.0.0.1:9', vkey: stranger.vkey };
  const outcomes = await new LogWitnesses(log, [...witnessConfig([w[0], stranger]).witnesses, down], {
    timeoutMs: 2000,
  }).cosign();
  assert.ok('time' in outcomes[0]);
  assert.match(
    (outcomes[1] as { error: string }).error,
    new RegExp(`does not know this log .*ask its operator to add origin ${log.origin} with key`),
  );
  assert.match((outcomes[2] as { error: string }).error, /fetch failed/);
  assert.equal(
    cosigners(parseNote(log.signedCheckpoint()), { quorum: 1, witnesses: [w[0].vkey, stranger.vkey] }).length,
    1,
  );
});

test('a data directory restored from an older backup: the witnesses say they saw a longer log', async () => {
  const dir = dataDirKnownBy(w);
  const log = PackageLog.open(dir);
  log.record([entry(1, 'd1')]);
  const backup = tempDir('pmf-wlog-');
  fs.cpSync(dir, backup, { recursive: true });
  log.record([entry(2, 'd2')]);
  await new LogWitnesses(log, witnessConfig(w).witnesses).cosign();
  const restored = await new LogWitnesses(PackageLog.open(backup), witnessConfig(w).witnesses).cosign();
  for (const o of restored)
    assert.match(
      (o as { error: string }).error,
      /has cosigned size 2 of this log, more than the 1 entries here: the log was truncated or restored from an older backup/,
    );
});

test('start-up: a provider whose log file was edited, or whose log key was replaced, does not start and says why', async () => {
  const pristine = tempDir('pmf-wlog-');
  const p = await startProvider(loopbackConfig(pristine), quiet);
  await p.close();
  const copy = (damage: (dir: string) => void): string => {
    const dir = tempDir('pmf-wlog-');
    fs.cpSync(pristine, dir, { recursive: true });
    damage(dir);
    return dir;
  };
  const edited = copy((d) => {
    const f = path.join(d, LOG_FILE);
    fs.writeFileSync(
      f,
      fs.readFileSync(f, 'utf8').replace(/"createdAt":"[^"]*"/, '"createdAt":"2020-01-01T00:00:00.000Z"'),
    );
  });
  await assert.rejects(
    startProvider(loopbackConfig(edited), quiet),
    new RegExp(`package log: ${path.join(edited, LOG_FILE)} was edited: its first 1 entries hash to`),
  );
  const rekeyed = copy((d) => {
    fs.rmSync(path.join(d, LOG_KEY_FILE));
    fs.writeFileSync(path.join(d, LOG_KEY_FILE), new Uint8Array(32).fill(3), { mode: 0o600 });
  });
  await assert.rejects(
    startProvider(loopbackConfig(rekeyed), quiet),
    /is not signed by package-log.key .*: the log key was replaced/,
  );
  const undamaged = await startProvider(loopbackConfig(copy(() => undefined)), quiet);
  await undamaged.close();
});

test('the head is resubmitted every refreshSeconds, never twice at once, and a failure is logged, not thrown', async (t) => {
  t.mock.timers.enable({ apis: ['setInterval'] });
  const log = PackageLog.open(dataDirKnownBy([]));
  let calls = 0;
  let release!: () => void;
  const hanging = new Promise<Response>((_, reject) => (release = () => reject(new Error('connection reset'))));
  const lines: string[] = [];
  const lw = new LogWitnesses(log, witnessConfig([w[0]]).witnesses, {
    fetch: (() => (calls++, hanging)) as typeof fetch,
    log: (l) => lines.push(l),
  });
  lw.start(60);
  t.mock.timers.tick(60_000);
  t.mock.timers.tick(60_000);
  assert.equal(calls, 1, 'the second tick waits for the first submission');
  release();
  await new Promise((r) => setImmediate(r));
  assert.match(lines.join('\n'), /witness w1.example\/witness did not cosign .*connection reset/);
  t.mock.timers.tick(60_000);
  assert.equal(calls, 2);
  lw.stop();
  t.mock.timers.tick(120_000);
  assert.equal(calls, 2, 'stopped');
});
