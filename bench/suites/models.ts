// Accuracy of the spam and topic classifiers: per algorithm and
// corpus, float vs quantized, accuracy vs share of features kept (Pretzel
// Fig. 13 analog) and candidate-topic recall of the public model (Fig. 14).
// Features come from the same TypeScript extractor the extension runs;
// scikit-learn (models/pmf_models) trains and evaluates.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { median, type BenchContext } from '../lib.js';
import { extractFeatures } from '../../models/features/extract.js';
import { makeSpec, type FeatureSpec } from '../../models/features/spec.js';
import { exportExamples } from '../../models/data/featurize.js';
import { hashSplit, loadReuters, loadSpamAssassin, loadTwentyNews, type Example } from '../../models/data/loaders.js';
import { runPython } from '../../models/data/python.js';

const HUGE_BYTES = 20 * 1024 * 1024;

/** Extraction time of a 20 MB one-part message (about 2.6 million words): bounded, and it must not throw. */
async function hugeMessageRow(ctx: BenchContext): Promise<void> {
  const line = Array.from({ length: 1000 }, (_, i) => `word${i}`).join(' ') + '\r\n';
  const raw = new TextEncoder().encode(`Subject: huge\r\n\r\n${line.repeat(Math.ceil(HUGE_BYTES / line.length))}`);
  const spec = makeSpec({ N: 1 << 16, lMax: 1024 });
  const times: number[] = [];
  let rows = 0;
  for (let i = 0; i < (ctx.quick ? 1 : 3); i++) {
    const t0 = performance.now();
    rows = (await extractFeatures(raw, spec)).rows.length;
    times.push(performance.now() - t0);
  }
  ctx.report({
    case: 'extract_huge_message',
    metric: 'time_ms',
    value: median(times),
    unit: 'ms',
    note: `${(raw.length / 2 ** 20).toFixed(1)} MiB, ${rows} rows; median of ${times.length}`,
  });
}

/** --quick: a deterministic subset, keeping the corpus's own train/test split. */
function subset(examples: Example[], quick: boolean, keep: number): Example[] {
  return quick ? examples.filter((e) => hashSplit(`subset\0${e.id}`, keep) === 'test') : examples;
}

export default async function models(ctx: BenchContext): Promise<void> {
  await hugeMessageRow(ctx);
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
