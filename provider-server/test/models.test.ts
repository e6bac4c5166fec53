import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { openPackage } from '../../protocol/package.js';
import { FileModelCatalog, readModelFile } from '../src/models.js';
import { readSecretFile } from '../src/secret-file.js';
import { tempDir } from '../../scripts/test/temp-dir.js';
import { KSK_LAYOUT } from '../../wasm/ts/he.js';

const DEFAULT_SPAM = path.resolve('models/default/spam.pmfm');

test('first run generates a 0600 key and a verifiable package; a changed model becomes version 2', async (t) => {
  const dir = tempDir('pmf-models-');
  const modelFile = path.join(dir, 'spam.pmfm');
  fs.copyFileSync(DEFAULT_SPAM, modelFile);
  fs.chmodSync(modelFile, 0o644);
  const warnings = t.mock.method(process, 'emitWarning');
  const progress: string[] = [];
  const c1 = await FileModelCatalog.prepare(dir, [{ id: 'spam', file: modelFile }], (d, t, l) =>
    progress.push(`${l} ${d}/${t}`),
  );
  const v1 = c1.current('spam')!;
  assert.equal(v1.version, 1);
  assert.deepEqual(
    warnings.mock.calls.map((c) => (c.arguments[1] as { code: string }).code),
    [],
    'the public demo model is used without a warning, though others can read it',
  );
  assert.equal(fs.statSync(v1.keyFile).mode & 0o777, 0o600, 'secret key file mode');
  const pkgBytes = new Uint8Array(fs.readFileSync(v1.packageFile));
  const { header, body } = openPackage(pkgBytes);
  assert.equal(header.modelId, 'spam');
  assert.equal(header.providerSeed, v1.providerSeed);
  assert.equal(header.params.T, v1.params.T);
  assert.ok(body.length > 0);
  const key = fs.readFileSync(v1.keyFile);
  assert.equal(Buffer.from(pkgBytes).includes(key.subarray(0, 64)), false, 'the key is not in the package');
  assert.ok(progress.length > 0 && progress.at(-1)!.startsWith('encrypting model spam v1'));
  assert.ok(!progress.join('\n').includes(key.toString('hex').slice(0, 32)));

  // A restart with the same model reuses v1 (same key, same bytes).
  fs.chmodSync(modelFile, 0o600);
  warnings.mock.resetCalls();
  const again = await FileModelCatalog.prepare(dir, [{ id: 'spam', file: modelFile }]);
  assert.equal(again.current('spam')!.packageSha256, v1.packageSha256);
  assert.equal(warnings.mock.callCount(), 0, 'a 0600 model file passes silently');

  // A retrained model (its file hash differs from v1's source) becomes v2
  // with a fresh key and seed; v1 stays downloadable.
  const versionsFile = path.join(dir, 'models', 'spam', 'versions.json');
  fs.writeFileSync(
    versionsFile,
    fs.readFileSync(versionsFile, 'utf8').replace(/"sourceSha256": "[0-9a-f]+"/, '"sourceSha256": "older-model"'),
  );
  const c2 = await FileModelCatalog.prepare(dir, [{ id: 'spam', file: modelFile }]);
  const v2 = c2.current('spam')!;
  assert.equal(v2.version, 2);
  assert.notEqual(v2.providerSeed, v1.providerSeed);
  assert.notDeepEqual(fs.readFileSync(v2.keyFile), key);
  assert.deepEqual(
    c2.all().map((x) => x.version),
    [1, 2],
  );
  assert.deepEqual(
    c2.published().map((e) => [e.modelId, e.version, e.packageSha256]),
    [
      ['spam', 1, v1.packageSha256],
      ['spam', 2, v2.packageSha256],
    ],
    'both versions are offered to the package log',
  );
});

test('a version built before the current KSK layout gets a successor with a fresh key and seed, once', async () => {
  const dir = tempDir('pmf-models-');
  const modelFile = path.join(dir, 'spam.pmfm');
  fs.copyFileSync(DEFAULT_SPAM, modelFile);
  fs.chmodSync(modelFile, 0o600);
  const v1 = (await FileModelCatalog.prepare(dir, [{ id: 'spam', file: modelFile }])).current('spam')!;
  // What versions.json holds for a version built before layout 3 (KSKs modulo q2): no kskLayout.
  const versionsFile = path.join(dir, 'models', 'spam', 'versions.json');
  const records = JSON.parse(fs.readFileSync(versionsFile, 'utf8')) as { kskLayout?: number }[];
  assert.equal(records[0].kskLayout, KSK_LAYOUT);
  delete records[0].kskLayout;
  fs.writeFileSync(versionsFile, JSON.stringify(records));

  const v2 = (await FileModelCatalog.prepare(dir, [{ id: 'spam', file: modelFile }])).current('spam')!;
  assert.equal(v2.version, 2, 'the same model file, a new version');
  assert.notEqual(v2.providerSeed, v1.providerSeed);
  assert.notDeepEqual(fs.readFileSync(v2.keyFile), fs.readFileSync(v1.keyFile));
  const again = (await FileModelCatalog.prepare(dir, [{ id: 'spam', file: modelFile }])).current('spam')!;
  assert.equal(again.version, 2, 'and only once');
});

test('a public model file (the bundled demo, trained on public corpora) that anyone can read gets no warning', (t) => {
  const dir = tempDir('pmf-model-');
  const f = path.join(dir, 'spam.pmfm');
  fs.copyFileSync(DEFAULT_SPAM, f);
  fs.chmodSync(f, 0o644);
  const warnings = t.mock.method(process, 'emitWarning');
  const bytes = readModelFile(f);
  assert.deepEqual(Buffer.from(bytes), fs.readFileSync(DEFAULT_SPAM), 'the bytes are read unchanged');
  assert.equal(warnings.mock.callCount(), 0);
  // The same weights trained on a provider's own mail are private: the warning is back.
  const own = path.join(dir, 'own.pmfm');
  fs.writeFileSync(own, withTrainedOn(fs.readFileSync(DEFAULT_SPAM), 'maildir:/srv/mail'), { mode: 0o644 });
  fs.chmodSync(own, 0o644);
  readModelFile(own);
  assert.equal(warnings.mock.callCount(), 1);
  assert.match(String(warnings.mock.calls[0].arguments[0]), /own\.pmfm has mode 644/);
});

/** A model file with its header's trainedOn.source replaced (magic, version, header length, header, padding to 8, body). */
function withTrainedOn(file: Buffer, source: string): Buffer {
  const hlen = file.readUInt32LE(12);
  const header = JSON.parse(file.subarray(16, 16 + hlen).toString('utf8'));
  const body = file.subarray(16 + hlen + ((8 - ((16 + hlen) % 8)) % 8));
  const json = Buffer.from(JSON.stringify({ ...header, trainedOn: { ...header.trainedOn, source } }));
  const prefix = Buffer.alloc(16);
  file.copy(prefix, 0, 0, 12);
  prefix.writeUInt32LE(json.length, 12);
  const pad = Buffer.alloc((8 - ((16 + json.length) % 8)) % 8);
  return Buffer.concat([prefix, json, pad, body]);
}

test('a plaintext model file that group or others can read is used, with a warning naming it', (t) => {
  const dir = tempDir('pmf-model-');
  const f = path.join(dir, 'm.pmfm');
  fs.writeFileSync(f, 'model');
  const warnings = t.mock.method(process, 'emitWarning');
  for (const [mode, warned] of [
    [0o600, false],
    [0o640, true],
    [0o604, true],
    [0o620, false],
  ] as const) {
    fs.chmodSync(f, mode);
    warnings.mock.resetCalls();
    assert.equal(Buffer.from(readModelFile(f)).toString(), 'model');
    assert.equal(warnings.mock.callCount(), warned ? 1 : 0, mode.toString(8));
    if (warned)
      assert.match(String(warnings.mock.calls[0].arguments[0]), new RegExp(`${f} has mode ${mode.toString(8)}`));
  }
});

test('a secret key file is refused when it is a symbolic link or not a regular file', () => {
  const dir = tempDir('pmf-key-');
  const real = path.join(dir, 'real.key');
  fs.writeFileSync(real, 'k', { mode: 0o600 });
  const link = path.join(dir, 'link.key');
  fs.symlinkSync(real, link);
  assert.throws(() => readSecretFile(link), /link\.key is a symbolic link/);
  const fifo = path.join(dir, 'fifo.key');
  execFileSync('mkfifo', ['-m', '600', fifo]); // would block a plain open until a writer appears
  assert.throws(() => readSecretFile(fifo), /not a regular file/);
  fs.mkdirSync(path.join(dir, 'dir.key'), { mode: 0o700 });
  assert.throws(() => readSecretFile(path.join(dir, 'dir.key')), /not a regular file/);
  assert.equal(Buffer.from(readSecretFile(real)).toString(), 'k');
});

test('a secret key file readable by group or others is refused', () => {
  const dir = tempDir('pmf-key-');
  const f = path.join(dir, 'k');
  fs.writeFileSync(f, 'x', { mode: 0o644 });
  fs.chmodSync(f, 0o644);
  assert.throws(() => readSecretFile(f), /mode 644; it must be 600/);
  fs.chmodSync(f, 0o600);
  assert.equal(readSecretFile(f).length, 1);
});
