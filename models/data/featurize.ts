// Bulk feature extraction for training (Node): the same extractFeatures the
// extension runs, with an on-disk cache so repeated training and benchmark
// runs skip the parse. The cache key covers the extractor's revision, the
// spec and every message's id and bytes, so a stale entry cannot be read.
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { extractFeatures, type Features } from '../features/extract.js';
import { EXTRACTOR_REVISION, type FeatureSpec } from '../features/spec.js';
import { libsvmLine } from './libsvm.js';
import { hashSplit, type Example } from './loaders.js';
import { labelOrder } from './sources.js';

const cacheDir = (): string =>
  process.env.PMF_FEATURE_CACHE ??
  path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../.data/models-cache');

function cacheKey(examples: Example[], spec: FeatureSpec): string {
  const h = createHash('sha256').update(`${EXTRACTOR_REVISION}\0${JSON.stringify(spec)}`);
  for (const e of examples) h.update(`\0${e.id}\0`).update(e.raw);
  return h.digest('hex').slice(0, 32);
}

function pack(all: Features[]): Uint8Array {
  const words = all.reduce((n, f) => n + 1 + 2 * f.rows.length, 0);
  const out = new Uint32Array(words);
  let o = 0;
  for (const f of all) {
    out[o++] = f.rows.length;
    out.set(f.rows, o);
    out.set(f.counts, o + f.rows.length);
    o += 2 * f.rows.length;
  }
  return new Uint8Array(out.buffer);
}

function unpack(bytes: Buffer, n: number): Features[] | null {
  const u = new Uint32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const out: Features[] = [];
  let o = 0;
  while (o < u.length) {
    const len = u[o++];
    out.push({ rows: u.slice(o, o + len), counts: u.slice(o + len, o + 2 * len) });
    o += 2 * len;
  }
  return out.length === n ? out : null;
}

/** A warning about one example's message (e.g. an empty body), for the CLI to show. */
export type ExampleWarning = (id: string, warning: string) => void;

/** onWarning hears about messages parsed now; a cache hit parses nothing, so it warned on the run that filled it. */
export async function featurize(
  examples: Example[],
  spec: FeatureSpec,
  useCache = true,
  onWarning?: ExampleWarning,
): Promise<Features[]> {
  const file = path.join(cacheDir(), `${cacheKey(examples, spec)}.bin`);
  if (useCache && fs.existsSync(file)) {
    const hit = unpack(fs.readFileSync(file), examples.length);
    if (hit) return hit;
  }
  const out: Features[] = [];
  for (const e of examples) out.push(await extractFeatures(e.raw, spec, (w) => onWarning?.(e.id, w)));
  if (useCache) {
    fs.mkdirSync(cacheDir(), { recursive: true });
    fs.writeFileSync(`${file}.tmp${process.pid}`, pack(out));
    fs.renameSync(`${file}.tmp${process.pid}`, file);
  }
  return out;
}

export interface ExportMeta {
  task: 'spam' | 'topics';
  labels: string[];
  featureSpec: FeatureSpec;
  source: string;
}

/** Writes meta.json, train.svm and test.svm for pmf_models. */
export function writeDataset(
  dir: string,
  meta: ExportMeta,
  parts: { train: [number, Features][]; test: [number, Features][] },
): void {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'meta.json'), JSON.stringify(meta));
  for (const name of ['train', 'test'] as const) {
    const lines = parts[name].map(([y, f]) => libsvmLine(y, f) + '\n');
    fs.writeFileSync(path.join(dir, `${name}.svm`), lines.join(''));
  }
}

export interface ExportSummary {
  labels: string[];
  train: number;
  test: number;
  /** Held-out examples dropped because no training example has their label. */
  skipped: number;
}

/**
 * Splits (an example's own split, else the hash split with `testFraction`),
 * orders labels from the training part, extracts features and writes the
 * folder pmf_models reads.
 */
export async function exportExamples(
  dir: string,
  opts: {
    task: 'spam' | 'topics';
    spec: FeatureSpec;
    source: string;
    testFraction: number;
    onWarning?: ExampleWarning;
  },
  examples: Example[],
): Promise<ExportSummary> {
  const split = (e: Example) => e.split ?? hashSplit(e.id, opts.testFraction);
  const labels = labelOrder(
    opts.task,
    examples.filter((e) => split(e) === 'train').map((e) => e.label),
  );
  const index = new Map(labels.map((l, i) => [l, i]));
  const kept = examples.filter((e) => index.has(e.label));
  const feats = await featurize(kept, opts.spec, true, opts.onWarning);
  const parts = { train: [] as [number, Features][], test: [] as [number, Features][] };
  kept.forEach((e, i) => parts[split(e)].push([index.get(e.label)!, feats[i]]));
  writeDataset(dir, { task: opts.task, labels, featureSpec: opts.spec, source: opts.source }, parts);
  return { labels, train: parts.train.length, test: parts.test.length, skipped: examples.length - kept.length };
}
