// Test helper for PROTOCOL.md §6: private classification must equal plaintext
// classification of the quantized model. Encrypts a default model with the
// lattice layer (wasm/ts/he.ts), runs the client's dot product and extraction,
// decrypts as the provider does, unblinds, and compares every column with
// plainScores.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadHe, makeParams } from '../../wasm/ts/he.js';
import { featurize } from '../data/featurize.js';
import { loadPlainModel, plainScores, type PlainModel } from '../plain/index.js';

const here = path.dirname(fileURLToPath(import.meta.url));

async function privateScores(model: PlainModel, emails: { rows: Uint32Array; counts: Uint32Array }[]) {
  const he = await loadHe();
  const h = model.header;
  const params = makeParams({ N: h.N, B: h.B, T: h.T, b_in: h.b_in, f_in: h.f_in });
  const sk = he.loadSecretKey(he.generateSecretKey());
  const client = he.newClientModel(params);
  for (const record of sk.encryptModel(params, model.weights)) client.push(record);
  client.finish();
  const providerSeed = he.randomSeed();
  const nonce = he.randomSeed();
  const pk = he.loadPublicKey(sk.publicKeyFor(providerSeed, nonce), providerSeed, nonce);
  const columns = Array.from({ length: h.B }, (_, j) => j);
  const mod = 2 ** h.T;
  const out = emails.map((f) => {
    const acc = client.dot(f);
    const scores = client.extract(acc, columns, pk).map(({ lwe, mask }) => {
      const d = (((sk.decryptLwe(lwe, params) - mask) % mod) + mod) % mod;
      return d >= mod / 2 ? d - mod : d; // T-bit two's complement
    });
    acc.dispose();
    return scores;
  });
  for (const handle of [pk, client, sk]) handle.dispose();
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
