// Provider CLI: train and evaluate spam and topic models on your own mail.
//   npx tsx models/cli.ts train    --task spam --algorithm lr --out spam.pmfm --maildir ~/labelled
//   npx tsx models/cli.ts evaluate --model spam.pmfm --mbox spam=junk.mbox --mbox ham=inbox.mbox [--out preds.jsonl]
//   npx tsx models/cli.ts export   --task topics --corpus 20news --out DIR      (LIBSVM files)
// See models/README.md for every option.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { makeSpec, type FeatureSpec } from './features/spec.js';
import { exportExamples, featurize, writeDataset } from './data/featurize.js';
import { randomSplit, type Example } from './data/loaders.js';
import { runPython } from './data/python.js';
import { loadSources } from './data/sources.js';
import { loadPlainModel, plainScores, publicMetadata } from './plain/model.js';

const OPTIONS = {
  task: { type: 'string' },
  algorithm: { type: 'string' },
  out: { type: 'string' },
  model: { type: 'string' },
  corpus: { type: 'string', multiple: true },
  jsonl: { type: 'string', multiple: true },
  mbox: { type: 'string', multiple: true },
  maildir: { type: 'string', multiple: true },
  mailstore: { type: 'string', multiple: true },
  'pmf-store': { type: 'string', multiple: true },
  N: { type: 'string' },
  fin: { type: 'string' },
  lmax: { type: 'string' },
  boolean: { type: 'boolean' },
  'b-in': { type: 'string' },
  select: { type: 'string' },
  threshold: { type: 'string' },
  'target-fpr': { type: 'string' },
  C: { type: 'string' },
  alpha: { type: 'string' },
  'test-fraction': { type: 'string' },
  split: { type: 'string' },
  seed: { type: 'string' },
  'public-out': { type: 'string' },
  'public-fraction': { type: 'string' },
  'meta-out': { type: 'string' },
  'no-float': { type: 'boolean' },
  all: { type: 'boolean' },
  help: { type: 'boolean' },
} as const;

type Args = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

const USAGE = `usage: npx tsx models/cli.ts <train|evaluate|export> [options]
data (repeatable, combinable):
  --corpus spamassassin|20news|reuters   bundled public corpora
  --jsonl FILE[.gz]                      {"label","text","id"?,"split"?} per line
  --mbox LABEL=FILE                      one mbox per label
  --maildir DIR                          DIR/<label>/ Maildirs or folders of messages
  --mailstore DIR                        a Dovecot mail store (Maildir or mbox folders): Junk is spam, the rest ham
  --pmf-store FILE                       provider-server's store.db: its messages by webmail folder
                                         (mail stores: deduplicated, encrypted mail skipped, split by time)
split: data keeps its own (corpora, jsonl "split"); train and export hold out the rest by a hash of its id
  --test-fraction f                      held-out share of the hash and random splits (default 0.2)
  --split random [--seed N]              a seeded random split of all data instead (same seed and data, same split)
train:    --task spam|topics --algorithm A --out MODEL [--N n] [--fin bits] [--lmax L] [--boolean]
          [--b-in bits] [--select N'] [--target-fpr f | --threshold t] [--C c] [--alpha a]
          [--public-out FILE --public-fraction f] [--meta-out FILE] [--no-float]
          spam algorithms: grnb lr svm; topic algorithms: mnb mlr ovr-svm
evaluate: --model MODEL [--all] [--out FILE]
          accuracy, precision, recall and F1 on the held-out part of split data (all of it with --all);
          --out writes one JSON line per message: {"id","label","predicted","score"}
export:   --task spam|topics --out DIR [spec options]`;

function need(a: Args, k: keyof Args): string {
  const v = a[k];
  if (typeof v !== 'string') throw new Error(`--${k} is required\n${USAGE}`);
  return v;
}

function num(v: string | undefined, name: string, fallback?: number): number | undefined {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!Number.isFinite(n)) throw new Error(`--${name} must be a number, got ${v}`);
  return n;
}

function specFrom(a: Args, task: 'spam' | 'topics'): FeatureSpec {
  return makeSpec({
    N: num(a.N, 'N', task === 'spam' ? 1 << 18 : 1 << 16),
    fIn: num(a.fin, 'fin', 4),
    lMax: num(a.lmax, 'lmax', 4096),
    boolean: a.boolean === true || a.algorithm === 'grnb',
  });
}

/** The examples, with --split random's seeded split in place of their own. */
function loadSplit(a: Args): Example[] {
  const examples = loadSources(a, testFraction(a));
  if (a.split === undefined) return examples;
  if (a.split !== 'random') throw new Error(`--split must be random, got ${a.split}`);
  const seed = num(a.seed, 'seed', 0)!;
  if (!Number.isInteger(seed)) throw new Error(`--seed must be an integer, got ${a.seed}`);
  const split = randomSplit(examples.length, testFraction(a), seed);
  return examples.map((e, i) => ({ ...e, split: split[i] }));
}

function testFraction(a: Args): number {
  const f = num(a['test-fraction'], 'test-fraction', 0.2)!;
  if (f < 0 || f > 1) throw new Error(`--test-fraction must be between 0 and 1, got ${f}`);
  return f;
}

function taskOf(a: Args): 'spam' | 'topics' {
  const t = need(a, 'task');
  if (t !== 'spam' && t !== 'topics') throw new Error(`--task must be spam or topics, got ${t}`);
  return t;
}

const warn = (id: string, warning: string): void => console.error(`warning: ${id}: ${warning}`);

async function exportTo(dir: string, task: 'spam' | 'topics', spec: FeatureSpec, examples: Example[], a: Args) {
  const source = [a.corpus, a.jsonl, a.mbox, a.maildir, a.mailstore, a['pmf-store']].flatMap((v) => v ?? []).join(' ');
  const r = await exportExamples(dir, { task, spec, source, testFraction: testFraction(a), onWarning: warn }, examples);
  if (r.skipped) console.log(`skipping ${r.skipped} held-out examples whose label has no training data`);
  console.log(`${r.train + r.test} examples (${r.train} train, ${r.test} held out), labels: ${r.labels.join(', ')}`);
}

async function train(a: Args): Promise<void> {
  const task = taskOf(a);
  const algorithm = need(a, 'algorithm');
  const out = path.resolve(need(a, 'out'));
  const spec = specFrom(a, task);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-train-'));
  try {
    await exportTo(dir, task, spec, loadSplit(a), a);
    const opt = (flag: string, v: string | undefined) => (v === undefined ? [] : [flag, v]);
    runPython([
      'train',
      ...['--data', dir, '--algorithm', algorithm, '--out', out],
      ...opt('--b-in', a['b-in']),
      ...opt('--select', a.select),
      ...opt('--threshold', a.threshold),
      ...opt('--target-fpr', a['target-fpr']),
      ...opt('--C', a.C),
      ...opt('--alpha', a.alpha),
      ...opt('--public-out', a['public-out'] && path.resolve(a['public-out'])),
      ...opt('--public-fraction', a['public-fraction']),
      ...(a['no-float'] ? ['--no-float'] : []),
    ]);
    if (a['meta-out']) {
      const model = loadPlainModel(new Uint8Array(fs.readFileSync(out)));
      fs.writeFileSync(a['meta-out'], JSON.stringify(publicMetadata(model.header), null, 2) + '\n');
      console.log(`wrote ${a['meta-out']} (public metadata)`);
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

export interface Metrics {
  accuracy: number;
  precision: number;
  recall: number;
  f1: number;
}

export interface EvaluateResult {
  /** Examples whose TypeScript plainScores equal the Python integer scores. */
  agree: number;
  total: number;
  quantized: Metrics;
  float?: Metrics;
  disagreements?: number;
}

/** One line of evaluate --out. */
export interface Prediction {
  id: string;
  label: string;
  predicted: string;
  /** Integer score: the margin for the positive (second) label of two-label models, else the predicted label's. */
  score: number;
}

function predictions(examples: Example[], labels: string[], scores: number[][], predicted: number[]): Prediction[] {
  return examples.map((e, i) => {
    const s = scores[i];
    const score = labels.length === 2 ? (s.length === 1 ? s[0] : s[1] - s[0]) : s[predicted[i]];
    return { id: e.id, label: e.label, predicted: labels[predicted[i]], score };
  });
}

async function evaluate(a: Args): Promise<EvaluateResult> {
  const model = loadPlainModel(new Uint8Array(fs.readFileSync(need(a, 'model'))));
  const { labels, featureSpec: spec } = model.header;
  const index = new Map(labels.map((l, i) => [l, i]));
  const all = loadSplit(a).filter((e) => a.all || e.split !== 'train');
  const examples = all.filter((e) => index.has(e.label));
  if (examples.length < all.length)
    console.log(`skipping ${all.length - examples.length} examples whose label the model does not know`);
  if (examples.length === 0) throw new Error('no examples with a label the model knows');
  const feats = await featurize(examples, spec, true, warn);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'pmf-eval-'));
  try {
    const parts = {
      train: [],
      test: examples.map((e, i) => [index.get(e.label)!, feats[i]] as [number, (typeof feats)[0]]),
    };
    writeDataset(dir, { task: model.header.task, labels, featureSpec: spec, source: 'evaluate' }, parts);
    runPython([
      'evaluate',
      '--data',
      dir,
      '--model',
      path.resolve(need(a, 'model')),
      '--report',
      path.join(dir, 'report.json'),
    ]);
    // The scores the TypeScript reference computes must equal scikit-learn's side.
    const report = JSON.parse(fs.readFileSync(path.join(dir, 'report.json'), 'utf8'));
    const same = feats.filter((f, i) => plainScores(model, f).every((s, j) => s === report.scores[i][j])).length;
    console.log(`TypeScript plainScores equal the Python integer scores on ${same}/${feats.length} examples`);
    if (same !== feats.length) process.exitCode = 1;
    if (a.out) {
      const lines = predictions(examples, labels, report.scores, report.predictions).map((p) => JSON.stringify(p));
      fs.writeFileSync(a.out, lines.map((l) => `${l}\n`).join(''));
      console.log(`wrote ${a.out} (${lines.length} predictions)`);
    }
    const { quantized, disagreements } = report;
    return { agree: same, total: feats.length, quantized, float: report.float, disagreements };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

async function exportCmd(a: Args): Promise<void> {
  const task = taskOf(a);
  await exportTo(need(a, 'out'), task, specFrom(a, task), loadSplit(a), a);
}

/** Runs one CLI command in-process (argv without "node cli.ts"). */
export async function run(argv: string[]): Promise<EvaluateResult | void> {
  const { values, positionals } = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true });
  const cmd = positionals[0];
  if (values.help || !cmd) return console.log(USAGE);
  const command = { train, evaluate, export: exportCmd }[cmd];
  if (!command) throw new Error(`unknown command ${cmd}\n${USAGE}`);
  return command(values);
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  run(process.argv.slice(2)).catch((e: Error) => {
    console.error(`error: ${e.message}`);
    process.exit(1);
  });
}
