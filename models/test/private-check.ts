// Test helper for docs/protocol.md#features-and-models: private classification must equal plaintext
// classification of the quantized model. Encrypts a default model with the
// lattice layer (wasm/ts/he.ts) at the parameters a served package uses,
// runs the client's dot product, key switch and extraction, decrypts with the
// user key as the provider does, unblinds, and compares every column with
// plainScores.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadHe, paramsFromHeader } from '../../wasm/ts/he.js';
import { localSession } from '../../wasm/test/he/local-session.js';
import { featurize } from '../data/featurize.js';
import { loadPlainModel, plainScores, type PlainModel } from '../plain/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));

async function privateScores(model: PlainModel, emails: { rows: Uint32Array; counts: Uint32Array }[]) {
  const he = await loadHe();
  const h = model.header;
  const params = paramsFromHeader(h);
  const sk = he.loadSecretKey(he.generateSecretKey());
  const client = he.newClientModel(params);
  for (const record of sk.forContext(params).encryptModel(model.weights)) client.push(record);
  client.finish();
  const session = localSession(he, sk, he.randomSeed(), params.T);
  const columns = Array.from({ length: h.B }, (_, j) => j);
  const mod = 2 ** h.T;
  const out = emails.map((f) => {
    const acc = client.dot(f);
    const scores = client.extract(acc, columns, session.pk, session.ksk).map(({ lwe, mask }) => {
      const d = (((session.user.forContext(params).decryptLwe(lwe) - mask) % mod) + mod) % mod;
      return d >= mod / 2 ? d - mod : d; // T-bit two's complement
    });
    acc.dispose();
    return scores;
  });
  for (const handle of [session, client, sk]) handle.dispose();
  return out;
}

export async function checkPrivateEqualsPlain(
  file: string,
  examples: { raw: string | Uint8Array; id: string; label: string }[],
) {
  const model = loadPlainModel(new Uint8Array(fs.readFileSync(path.join(here, '../default', file))));
  const feats = await featurize(examples, model.header.featureSpec);
  const priv = await privateScores(model, feats);
  feats.forEach((f, i) => assert.deepEqual(priv[i], [...plainScores(model, f)], `${file}: ${examples[i].id}`));
}
