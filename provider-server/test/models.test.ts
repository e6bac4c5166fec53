import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { openPackage } from '../../protocol/package.js';
import { FileModelCatalog, readSecretFile } from '../src/models.js';

const DEFAULT_SPAM = path.resolve('models/default/spam.pmfm');

test('first run generates a 0600 key and a verifiable package; a changed model becomes version 2', async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-models-'));
  const modelFile = path.join(dir, 'spam.pmfm');
  fs.copyFileSync(DEFAULT_SPAM, modelFile);
  const progress: string[] = [];
  const c1 = await FileModelCatalog.prepare(dir, [{ id: 'spam', file: modelFile }], (d, t, l) =>
    progress.push(`${l} ${d}/${t}`),
  );
  const v1 = c1.current('spam')!;
  assert.equal(v1.version, 1);
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
  const again = await FileModelCatalog.prepare(dir, [{ id: 'spam', file: modelFile }]);
  assert.equal(again.current('spam')!.packageSha256, v1.packageSha256);

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
  fs.rmSync(dir, { recursive: true });
});

test('a secret key file readable by group or others is refused', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-key-'));
  const f = path.join(dir, 'k');
  fs.writeFileSync(f, 'x', { mode: 0o644 });
  fs.chmodSync(f, 0o644);
  assert.throws(() => readSecretFile(f), /mode 644; it must be 600/);
  fs.chmodSync(f, 0o600);
  assert.equal(readSecretFile(f).length, 1);
  fs.rmSync(dir, { recursive: true });
});
