// Accuracy of the spam and topic classifiers (issue 5): per algorithm and
// corpus, float vs quantized, accuracy vs share of features kept (Pretzel
// Fig. 13 analog) and candidate-topic recall of the public model (Fig. 14).
// Features come from the same TypeScript extractor the extension runs;
// scikit-learn (models/pmf_models) trains and evaluates.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BenchContext } from '../lib.js';
import { makeSpec, type FeatureSpec } from '../../models/features/spec.js';
import { featurize, writeDataset } from '../../models/data/featurize.js';
import { hashSplit, loadReuters, loadSpamAssassin, loadTwentyNews, type Example } from '../../models/data/loaders.js';
import { runPython } from '../../models/data/python.js';
import { labelOrder } from '../../models/data/sources.js';

/** --quick: a deterministic subset, keeping the corpus's own train/test split. */
function subset(examples: Example[], quick: boolean, keep: number): Example[] {
  return quick ? examples.filter((e) => hashSplit(`subset\0${e.id}`, keep) === 'test') : examples;
}

async function exportCorpus(
  dir: string,
  task: 'spam' | 'topics',
  source: string,
  examples: Example[],
  spec: FeatureSpec,
): Promise<void> {
  const labels = labelOrder(
    task,
    examples.filter((e) => e.split === 'train').map((e) => e.label),
  );
  const index = new Map(labels.map((l, i) => [l, i]));
  const kept = examples.filter((e) => index.has(e.label));
  const feats = await featurize(kept, spec);
  const parts = { train: [] as [number, (typeof feats)[0]][], test: [] as [number, (typeof feats)[0]][] };
  kept.forEach((e, i) => parts[e.split ?? 'train'].push([index.get(e.label)!, feats[i]]));
  writeDataset(dir, { task, labels, featureSpec: spec, source }, parts);
}

export default async function models(ctx: BenchContext): Promise<void> {
  // PMF_BENCH_KEEP=DIR keeps the exported LIBSVM folders for inspection.
  const dir = process.env.PMF_BENCH_KEEP ?? fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-bench-models-'));
  try {
    const spam = subset(loadSpamAssassin(), ctx.quick, 0.3);
    await exportCorpus(path.join(dir, 'spamassassin'), 'spam', 'spamassassin', spam, makeSpec({ N: 1 << 18 }));
    await exportCorpus(
      path.join(dir, 'spamassassin-bool'),
      'spam',
      'spamassassin',
      spam,
      makeSpec({ N: 1 << 18, boolean: true }),
    );
    // Quick runs use 2^14 rows so multinomial LR fits in seconds.
    const topicSpec = makeSpec({ N: ctx.quick ? 1 << 14 : 1 << 16 });
    await exportCorpus(
      path.join(dir, '20news'),
      'topics',
      '20news',
      subset(loadTwentyNews(), ctx.quick, 0.2),
      topicSpec,
    );
    await exportCorpus(
      path.join(dir, 'reuters'),
      'topics',
      'reuters',
      subset(loadReuters(), ctx.quick, 0.3),
      topicSpec,
    );
    const out = runPython(['bench', '--data', dir, ...(ctx.quick ? ['--quick'] : [])], true);
    for (const line of out.split('\n')) if (line.trim()) ctx.report(JSON.parse(line));
  } finally {
    if (!process.env.PMF_BENCH_KEEP) fs.rmSync(dir, { recursive: true, force: true });
  }
}
