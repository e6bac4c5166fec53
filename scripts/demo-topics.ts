// The demo's topics part (scripts/demo.ts): a few 20 Newsgroups test posts,
// OpenPGP-encrypted and delivered; the client extracts each topic privately
// for the provider (it sends B' re-randomized LWE ciphertexts and evaluates
// the garbled argmax; the provider checks the output labels and records the
// topic). Printed: the topic the provider recorded beside the quantized
// plaintext decomposed topic and the true newsgroup.
import fs from 'node:fs';
import path from 'node:path';
import type * as openpgp from 'openpgp';
import { nodeSocket } from '../client/node/cli.js';
import { DirectoryStorage } from '../client/node/node-storage.js';
import { decryptMessage } from '../mail/decrypt.js';
import { runClassification } from '../client/core/runner.js';
import { FileReplayStore } from '../client/node/topic-replay-file.js';
import { ReplayLog } from '../client/core/topic-replay.js';
import { topicConnector, type TopicResult } from '../client/core/topic-session.js';
import { loadTwentyNews } from '../models/data/loaders.js';
import { extractFeatures, validateSpec } from '../models/features/index.js';
import { decomposedTopic, loadPlainModel } from '../models/plain/index.js';
import { openStore } from '../provider-server/src/provider.js';
import type { He } from '../wasm/ts/he.js';

export interface TopicDemo {
  base: string;
  dataDir: string;
  clientDir: string;
  token: string;
  he: He;
  count: number;
  modelFile: string;
  candidatesFile: string;
  encrypt(raw: string, id: string): Promise<string>;
  privateKey: openpgp.PrivateKey;
  say(s: string): void;
}

/** One test post from each of `count` newsgroups spread over the 20. */
function pickPosts(count: number) {
  const first = new Map<string, ReturnType<typeof loadTwentyNews>[number]>();
  loadTwentyNews()
    .filter((e, i) => e.split === 'test' && i % 97 === 0)
    .forEach((e) => first.has(e.label) || first.set(e.label, e));
  const groups = [...first.values()];
  return Array.from(
    { length: Math.min(count, groups.length) },
    (_, k) => groups[Math.floor((k * groups.length) / count)],
  );
}

/** Returns whether every private topic equals the plaintext decomposed topic. */
export async function topicsDemo(d: TopicDemo): Promise<boolean> {
  const posts = pickPosts(d.count);
  const store = await openStore({ dataDir: d.dataDir });
  const userId = (await store.userId('demo'))!;
  const delivered = new Map<string, { label: string; raw: string; enc: string }>();
  for (const e of posts) {
    const id = `${e.id.replace(/\//g, '.')}@20news.demo`;
    const raw = e.raw as string;
    const enc = await d.encrypt(raw, id);
    await store.deliver(userId, id, enc);
    delivered.set(id, { label: e.label, raw, enc });
  }
  d.say(`delivered ${posts.length} encrypted 20 Newsgroups test posts; extracting their topics privately`);
  // The provider's secret model, read only to show the private topic equals the plaintext one.
  const model = loadPlainModel(new Uint8Array(fs.readFileSync(d.modelFile)));
  const publicModel = loadPlainModel(new Uint8Array(fs.readFileSync(d.candidatesFile)));
  const spec = validateSpec(model.header.featureSpec);
  const connector = topicConnector({
    server: d.base,
    token: d.token,
    he: d.he,
    storage: new DirectoryStorage(path.join(d.clientDir, 'client-cache')),
    socket: nodeSocket,
    replay: await ReplayLog.open(new FileReplayStore(path.join(d.clientDir, 'topic-replay.jsonl'))),
  });
  const widths = [40, 26, 26, 26, 5];
  const cols = (...c: string[]) => c.map((x, i) => x.slice(0, widths[i]).padEnd(widths[i])).join(' ');
  console.log(cols('message id', 'private topic (provider)', 'plaintext topic', 'true newsgroup', 'match'));
  const labels = model.header.labels;
  let agree = 0;
  let n = 0;
  const costs = { sent: 0, received: 0, ms: 0 };
  await runClassification<TopicResult>(
    [...delivered.keys()].map((id) => ({
      id,
      raw: async () => decryptMessage(delivered.get(id)!.enc, [d.privateKey]),
    })),
    {
      connect: (k) => connector.connect(k),
      onOutcome: async (o) => {
        const t = delivered.get(o.messageId)!;
        if (o.kind !== 'verdict') return console.log(cols(o.messageId, o.kind, '', t.label, ''));
        const bPrime = connector.model()!.bPrime;
        const plain = labels[decomposedTopic(model, publicModel, await extractFeatures(t.raw, spec), bPrime)];
        const got = labels[(await store.topicOf(userId, o.messageId)) ?? -1] ?? '(none)';
        agree += got === plain ? 1 : 0;
        n++;
        costs.sent += o.bytesSent;
        costs.received += o.bytesReceived;
        costs.ms += o.clientMs;
        console.log(cols(o.messageId, got, plain, t.label, got === plain ? 'yes' : 'NO'));
      },
    },
  );
  await store.close();
  const m = connector.model();
  d.say(
    `private topic = plaintext decomposed topic on ${agree}/${n}; per email (B' = ${m?.bPrime} of B = ${m?.params.B}): ` +
      `sent ${(costs.sent / n / 1024).toFixed(1)} KiB, received ${(costs.received / n / 1024).toFixed(1)} KiB, client ${(costs.ms / n).toFixed(0)} ms`,
  );
  return agree === n && n === posts.length;
}
