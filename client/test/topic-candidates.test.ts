// The public candidate model the client downloads is used only if it is the
// one the package pins (hash, size, topics, feature spec), and a provider
// cannot make the client buffer more than the pinned size.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import type { PackageHeader } from '../../protocol/package.js';
import type { PackageStorage, VerifiedPackage } from '../core/download.js';
import { ensureCandidates, verifyCandidates } from '../core/topic-session.js';

const candidates = new Uint8Array(fs.readFileSync(path.resolve('models/default/topics-candidates.pmfm')));
const meta = JSON.parse(fs.readFileSync(path.resolve('models/default/topics.public.json'), 'utf8'));

function pkg(over: Partial<PackageHeader> = {}): VerifiedPackage {
  const header = {
    modelId: 'topics',
    modelVersion: 1,
    task: 'topics',
    labels: meta.labels,
    featureSpec: meta.featureSpec,
    params: { B: meta.B },
    topics: {
      bPrime: 20,
      candidatesSha256: createHash('sha256').update(candidates).digest('hex'),
      candidatesBytes: candidates.length,
    },
    ...over,
  } as unknown as PackageHeader;
  return { header, body: new Uint8Array(0), sha256: '00'.repeat(32) };
}

class MemoryStorage implements PackageStorage {
  readonly files = new Map<string, Uint8Array>();
  async get(key: string) {
    return this.files.get(key);
  }
  async getPartial() {
    return undefined;
  }
  async appendPartial() {}
  async dropPartial() {}
  async put(key: string, data: Uint8Array) {
    this.files.set(key, data);
  }
}

const serve = (body: Uint8Array): typeof fetch =>
  (async () => new Response(body.slice().buffer)) as unknown as typeof fetch;

test('the pinned candidate model is accepted, stored and read back', async () => {
  const storage = new MemoryStorage();
  const got = await ensureCandidates({ baseUrl: 'http://127.0.0.1:1', pkg: pkg(), storage, fetch: serve(candidates) });
  assert.deepEqual(got, candidates);
  assert.ok(storage.files.has('topics-v1-candidates'));
  const again = await ensureCandidates({
    baseUrl: 'http://127.0.0.1:1',
    pkg: pkg(),
    storage,
    fetch: () => assert.fail('no second download'),
  });
  assert.deepEqual(again, candidates);
});

test('a changed, longer or shorter candidate model, or one of other topics, is refused and not stored', async () => {
  const storage = new MemoryStorage();
  const changed = candidates.slice();
  changed[changed.length - 1] ^= 1;
  const longer = new Uint8Array(candidates.length + 1);
  longer.set(candidates);
  for (const [body, why] of [
    [changed, /SHA-256/],
    [longer, /longer than/],
    [candidates.subarray(0, 100), /100 bytes/],
  ] as const) {
    await assert.rejects(
      ensureCandidates({ baseUrl: 'http://127.0.0.1:1', pkg: pkg(), storage, fetch: serve(body) }),
      why,
    );
  }
  assert.equal(storage.files.size, 0);
  assert.throws(() => verifyCandidates(pkg({ labels: [...meta.labels].reverse() }), candidates), /topics/);
  assert.throws(
    () => verifyCandidates(pkg({ featureSpec: { ...meta.featureSpec, N: 1024 } }), candidates),
    /feature spec/,
  );
});
