// Reader for the provider-secret plaintext model written by the Python
// training (format documented in models/README.md and pmf_models/plainmodel.py),
// the reference dot products the private protocol must reproduce, and the
// public candidate model's top-B' selection. Browser- and Node-safe.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import type { Features } from '../features/extract.js';
import { countCap, MAX_N, validateSpec, type FeatureSpec } from '../features/spec.js';
import { MAX_T, MIN_T } from '../../wasm/ts/limits.js';
import { modelT, qmax } from './bounds.js';

export const PLAIN_FORMAT = 'pmf-plain-model';
export const PLAIN_VERSION = 1;
const MAGIC = 'PMFPLAIN';
export const ALGORITHMS = { spam: ['grnb', 'lr', 'svm'], topics: ['mnb', 'mlr', 'ovr-svm'] } as const;

export interface PlainModelHeader {
  format: typeof PLAIN_FORMAT;
  formatVersion: typeof PLAIN_VERSION;
  /** "private": the provider's secret model; "public": a topic candidate model shipped to clients. */
  role: 'private' | 'public';
  task: 'spam' | 'topics';
  algorithm: string;
  /** Spam: [negative, positive]; score ≥ 0 means labels[1]. Topics: one per column. */
  labels: string[];
  N: number;
  B: number;
  b_in: number;
  f_in: number;
  L_max: number;
  T: number;
  featureSpec: FeatureSpec;
  /** Float weight × scale = integer weight (before rounding). */
  scale: number;
  threshold: number;
  floatWeights: boolean;
  bodySha256: string;
  [extra: string]: unknown;
}

export interface PlainModel {
  header: PlainModelHeader;
  /** (N+1)×B row-major; row 0 is the bias row with the threshold folded in. */
  weights: Int32Array;
  /** Same layout, the unquantized model (only in files that keep it). */
  floatWeights?: Float32Array;
}

function fail(msg: string): never {
  throw new Error(`plaintext model: ${msg}`);
}

function checkHeader(h: Record<string, unknown>): PlainModelHeader {
  if (h.format !== PLAIN_FORMAT) fail(`format is ${JSON.stringify(h.format)}`);
  if (h.formatVersion !== PLAIN_VERSION) fail(`unsupported format version ${JSON.stringify(h.formatVersion)}`);
  if (h.task !== 'spam' && h.task !== 'topics') fail(`unknown task ${JSON.stringify(h.task)}`);
  if (h.role !== 'private' && h.role !== 'public') fail(`unknown role ${JSON.stringify(h.role)}`);
  if (!(ALGORITHMS[h.task] as readonly string[]).includes(h.algorithm as string))
    fail(`unknown ${h.task} algorithm ${JSON.stringify(h.algorithm)}`);
  const spec = validateSpec(h.featureSpec);
  const int = (k: string, lo: number, hi: number): number => {
    const v = h[k];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi) fail(`${k} must be in [${lo}, ${hi}]`);
    return v;
  };
  const N = int('N', 1, MAX_N);
  const B = int('B', 1, 1 << 16);
  int('b_in', 2, 31);
  int('T', MIN_T, MAX_T);
  if (N !== spec.N || h.f_in !== spec.fIn || h.L_max !== spec.lMax) fail('N, f_in, L_max disagree with featureSpec');
  const labels = h.labels;
  if (!Array.isArray(labels) || labels.some((l) => typeof l !== 'string')) fail('labels must be strings');
  if (h.task === 'spam' ? B !== 1 || labels.length !== 2 : labels.length !== B) fail(`labels do not fit B = ${B}`);
  if (typeof h.floatWeights !== 'boolean' || typeof h.bodySha256 !== 'string') fail('missing body description');
  return h as unknown as PlainModelHeader;
}

/** Parses and fully validates a model file (hash, sizes, weight ranges). */
export function loadPlainModel(bytes: Uint8Array): PlainModel {
  if (bytes.length < 16 || new TextDecoder().decode(bytes.subarray(0, 8)) !== MAGIC) fail('bad magic');
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const version = view.getUint32(8, true);
  if (version !== PLAIN_VERSION) fail(`unsupported version ${version}`);
  const hlen = view.getUint32(12, true);
  if (16 + hlen > bytes.length) fail('truncated header');
  let raw: Record<string, unknown>;
  try {
    raw = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes.subarray(16, 16 + hlen)));
  } catch {
    fail('header is not valid JSON');
  }
  const header = checkHeader(raw);
  const start = 16 + hlen + ((8 - ((16 + hlen) % 8)) % 8);
  const count = (header.N + 1) * header.B;
  const expected = count * (header.floatWeights ? 8 : 4);
  if (bytes.length - start !== expected) fail(`body is ${bytes.length - start} bytes, expected ${expected}`);
  const body = bytes.subarray(start);
  if (bytesToHex(sha256(body)) !== header.bodySha256) fail('body does not match its SHA-256 (corrupt file)');
  const bodyView = new DataView(body.buffer, body.byteOffset, body.byteLength);
  const weights = new Int32Array(count);
  const limit = qmax(header.b_in);
  for (let i = 0; i < count; i++) {
    const w = bodyView.getInt32(i * 4, true);
    if (w > limit || w < -limit) fail(`weight ${i} = ${w} is outside ±${limit} (b_in = ${header.b_in})`);
    weights[i] = w;
  }
  // Every admissible email must decode: |d| < 2^(T−1) (models/plain/bounds.ts).
  const need = modelT(weights, header.B, header.b_in, countCap(header.featureSpec), header.L_max);
  if (header.T < need) fail(`T is ${header.T}, but these weights and L_max need T = ${need}`);
  let floatWeights: Float32Array | undefined;
  if (header.floatWeights) {
    floatWeights = new Float32Array(count);
    for (let i = 0; i < count; i++) floatWeights[i] = bodyView.getFloat32((count + i) * 4, true);
  }
  return { header, weights, floatWeights };
}

/** Throws unless the features are admissible for the model (the T proof assumes it). */
export function checkFeatures(header: PlainModelHeader, f: Features): void {
  const cap = countCap(header.featureSpec);
  if (f.rows.length !== f.counts.length) throw new Error('features: rows and counts differ in length');
  if (f.rows.length > header.L_max) throw new Error(`features: ${f.rows.length} rows exceed L_max = ${header.L_max}`);
  for (let i = 0; i < f.rows.length; i++) {
    const r = f.rows[i];
    if (r < 1 || r > header.N || (i > 0 && r <= f.rows[i - 1]))
      throw new Error('features: rows must be strictly increasing in 1..N');
    if (f.counts[i] < 1 || f.counts[i] > cap) throw new Error(`features: count ${f.counts[i]} outside 1..${cap}`);
  }
}

/**
 * d_j = W[0][j] + Σ_f x_f·W[f][j] for every column j: exactly what the private
 * dot product decrypts to. |d_j| < 2^(T-1) ≤ 2^31, so it fits an Int32Array.
 */
export function plainScores(model: PlainModel, f: Features): Int32Array {
  const { B } = model.header;
  checkFeatures(model.header, f);
  const w = model.weights;
  const acc = new Float64Array(B);
  for (let j = 0; j < B; j++) acc[j] = w[j];
  // Four rows per pass over acc: B = 2048 columns make this the client's candidate cost.
  const { rows, counts } = f;
  let i = 0;
  for (; i + 4 <= rows.length; i += 4) {
    const [b0, b1, b2, b3] = Array.from(rows.subarray(i, i + 4), (r) => r * B);
    const [x0, x1, x2, x3] = counts.subarray(i, i + 4);
    for (let j = 0; j < B; j++) acc[j] += x0 * w[b0 + j] + x1 * w[b1 + j] + x2 * w[b2 + j] + x3 * w[b3 + j];
  }
  for (; i < rows.length; i++) {
    const base = rows[i] * B;
    const x = counts[i];
    for (let j = 0; j < B; j++) acc[j] += x * w[base + j];
  }
  return Int32Array.from(acc);
}

/** Spam verdict of a B = 1 model: score ≥ 0 (the threshold is folded into the bias). */
export const isSpam = (scores: Int32Array): boolean => scores[0] >= 0;

/** The winning column; ties go to the lowest index. */
export function argmax(scores: ArrayLike<number>): number {
  let best = 0;
  for (let j = 1; j < scores.length; j++) if (scores[j] > scores[best]) best = j;
  return best;
}

/** Label of the plaintext verdict (the reference for the private result). */
export function plainVerdict(model: PlainModel, f: Features): string {
  const s = plainScores(model, f);
  return model.header.task === 'spam' ? model.header.labels[isSpam(s) ? 1 : 0] : model.header.labels[argmax(s)];
}

/**
 * The candidate set S' for decomposed topic extraction (Pretzel §4.3): the
 * bPrime best columns of the public model (ties to the lower index), returned
 * in ascending index order, so the garbled argmax's "first maximum wins" rule
 * breaks ties towards the lower index exactly as argmax does.
 */
export function candidates(publicModel: PlainModel, f: Features, bPrime: number): Uint32Array {
  if (publicModel.header.task !== 'topics') throw new Error('candidates: not a topic model');
  const s = plainScores(publicModel, f);
  if (!Number.isInteger(bPrime) || bPrime < 1 || bPrime > s.length)
    throw new Error(`candidates: B' must be in 1..${s.length}`);
  // The B' best so far, by score and then index: one pass over the B columns, no sort of them all.
  const best: number[] = [];
  for (let j = 0; j < s.length; j++) {
    const full = best.length === bPrime;
    if (full && s[j] <= s[best[bPrime - 1]]) continue; // a tie goes to the lower index, already in
    let k = full ? bPrime - 1 : best.length;
    for (; k > 0 && s[best[k - 1]] < s[j]; k--) best[k] = best[k - 1];
    best[k] = j;
  }
  return Uint32Array.from(best).sort();
}

/**
 * Plaintext reference of decomposed topic extraction: the private model's
 * best column among the public model's candidates (what the provider learns).
 */
export function decomposedTopic(model: PlainModel, publicModel: PlainModel, f: Features, bPrime: number): number {
  const set = candidates(publicModel, f, bPrime);
  const s = plainScores(model, f);
  let best = set[0];
  for (const j of set) if (s[j] > s[best]) best = j;
  return best;
}

/** What a client may see: the header without training statistics. */
export function publicMetadata(header: PlainModelHeader): Record<string, unknown> {
  const keys = ['format', 'formatVersion', 'task', 'algorithm', 'labels', 'N', 'B', 'b_in', 'f_in', 'L_max', 'T'];
  return { ...Object.fromEntries(keys.map((k) => [k, header[k]])), featureSpec: header.featureSpec };
}

/** The public corpora models/ can train on by name (models/data/sources.ts CORPORA). */
export const PUBLIC_CORPORA: readonly string[] = ['spamassassin', '20news', 'reuters'];

/** Whether a model was trained on public corpora only (its header's trainedOn.source): a demo, not the provider's own mail. */
export function trainedOnPublicCorpora(header: PlainModelHeader): boolean {
  const source = (header.trainedOn as { source?: unknown } | undefined)?.source;
  const names = typeof source === 'string' ? source.split(' ').filter(Boolean) : [];
  return names.length > 0 && names.every((n) => PUBLIC_CORPORA.includes(n));
}
