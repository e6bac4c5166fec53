// Accuracy of the spam and topic classifiers: per algorithm and
// corpus, float vs quantized, accuracy vs share of features kept (Pretzel
// Fig. 13 analog) and candidate-topic recall of the public model (Fig. 14).
// Features come from the same TypeScript extractor the extension runs;
// scikit-learn (models/pmf_models) trains and evaluates.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { BenchContext } from '../lib.js';
import { makeSpec, type FeatureSpec } from '../../models/features/spec.js';
import { exportExamples } from '../../models/data/featurize.js';
import { hashSplit, loadReuters, loadSpamAssassin, loadTwentyNews, type Example } from '../../models/data/loaders.js';
import { runPython } from '../../models/data/python.js';

/** --quick: a deterministic subset, keeping the corpus's own train/test split. */
function subset(examples: Example[], quick: boolean, keep: number): Example[] {
  return quick ? examples.filter((e) => hashSplit(`subset\0${e.id}`, keep) === 'test') : examples;
}

export default async function models(ctx: BenchContext): Promise<void> {
  // PMF_BENCH_KEEP=DIR keeps the exported LIBSVM folders for inspection.
  const dir = process.env.PMF_BENCH_KEEP ?? fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-bench-models-'));
  // Every corpus here has its own train/test split; testFraction is unused.
  const exportTo = (name: string, task: 'spam' | 'topics', spec: FeatureSpec, examples: Example[]) =>
    exportExamples(path.join(dir, name), { task, spec, source: name, testFraction: 0.2 }, examples);
  try {
    const spam = subset(loadSpamAssassin(), ctx.quick, 0.3);
    await exportTo('spamassassin', 'spam', makeSpec({ N: 1 << 18 }), spam);
    await exportTo('spamassassin-bool', 'spam', makeSpec({ N: 1 << 18, boolean: true }), spam);
    // Quick runs use 2^14 rows so multinomial LR fits in seconds.
    const topicSpec = makeSpec({ N: ctx.quick ? 1 << 14 : 1 << 16 });
    await exportTo('20news', 'topics', topicSpec, subset(loadTwentyNews(), ctx.quick, 0.2));
    await exportTo('reuters', 'topics', topicSpec, subset(loadReuters(), ctx.quick, 0.3));
    const out = runPython(['bench', '--data', dir, ...(ctx.quick ? ['--quick'] : [])], true);
    for (const line of out.split('\n')) if (line.trim()) ctx.report(JSON.parse(line));
  } finally {
    if (!process.env.PMF_BENCH_KEEP) fs.rmSync(dir, { recursive: true, force: true });
  }
}
