// Lattice layer (docs/crypto.md): per-operation costs, the client's dot
// product across model and email sizes, sizes on the wire and on disk, and
// the peer the design names (SEAL in WASM, node-seal 5.1.7) computing the same
// B = 1 dot product with BFV batching.
import { randomInt } from 'node:crypto';
import { createRequire } from 'node:module';
import { loadCore } from '../../wasm/ts/core.js';
import {
  type ClientModel,
  type Features,
  type HeParams,
  type ProviderKey,
  HE_N,
  MODEL_A_ROUNDS,
  heLayout,
  loadHe,
  ksGadget,
  makeParams,
} from '../../wasm/ts/he.js';
import { type LocalSession, localSession } from '../../wasm/test/he/local-session.js';
import { Q_MINUS_T } from '../../wasm/ts/limits.js';
import { median, timePerCall, type BenchContext } from '../lib.js';

const PRETZEL = {
  decryptUs: 31, // XPIR-BV decrypt
  shiftAddUs: 70,
  dotMs: 358, // N = 5M, L = 5000
  ctBytes: 16 * 1024,
  spamModelBytes: 183.5e6, // N = 5M, B = 2
  topicsModelBytes: 720.7e6, // N = 20K, B = 2048
};

const ms = (ns: number): number => ns / 1e6;

function email(N: number, L: number, maxCount = 1): Features {
  const rows = new Set<number>();
  while (rows.size < L) rows.add(randomInt(1, N + 1));
  return { rows: Uint32Array.from(rows), counts: Uint32Array.from(rows, () => randomInt(1, maxCount + 1)) };
}

/** Median wall time of fn over `rounds` runs (after one warm-up), in ns. */
function timeRounds(fn: () => void, rounds: number): number {
  fn();
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = process.hrtime.bigint();
    fn();
    samples.push(Number(process.hrtime.bigint() - t0));
  }
  return median(samples);
}

/** Random b_in-bit weights generated one ciphertext's worth at a time (no (N+1)-sized array). */
function* weightChunks(p: HeParams): Generator<Int32Array> {
  const limit = 2 ** (p.b_in - 1) - 1;
  const perChunk = heLayout(p).rowsPerCt * p.B;
  for (let left = (p.N + 1) * p.B; left > 0; left -= perChunk) {
    const chunk = new Int32Array(Math.min(perChunk, left));
    for (let i = 0; i < chunk.length; i++) chunk[i] = randomInt(-limit, limit + 1);
    yield chunk;
  }
}

function buildModel(sk: ProviderKey, model: ClientModel): ClientModel {
  for (const record of sk.forContext(model.params).encryptModel(weightChunks(model.params))) model.push(record);
  return model.finish();
}

export default async function he(ctx: BenchContext): Promise<void> {
  const h = await loadHe();
  const core = await loadCore();
  const sk = h.loadSecretKey(h.generateSecretKey());
  const providerSeed = h.randomSeed();
  const nonce = h.randomSeed();
  const T = makeParams({ N: 1, B: 1 }).T; // the default plaintext width of these rows
  const user = { salt: h.randomSeed(), epoch: 1 };
  const session = localSession(h, sk, providerSeed, T, user);
  const kskBytes = sk.keySwitchKey(providerSeed, session.user, user, T);

  // Provider: one model ciphertext, one public key, one decryption.
  const one = makeParams({ N: HE_N - 1, B: 1 });
  const w1 = new Int32Array(HE_N).map(() => randomInt(-127, 128));
  const encNs = timePerCall(() => sk.forContext(one).encryptModel(w1).next(), { minMs: ctx.quick ? 300 : 1000 });
  ctx.report({ case: 'encrypt_ct', metric: 'time_us', value: encNs / 1e3, unit: 'us', note: 'seed ‖ b, both limbs' });
  const pkNs = timePerCall(() => sk.publicKeyFor(providerSeed, nonce), { minMs: ctx.quick ? 200 : 500 });
  ctx.report({ case: 'public_key', metric: 'time_us', value: pkNs / 1e3, unit: 'us', note: 'p0 for one client' });
  const kskNs = timeRounds(() => sk.keySwitchKey(providerSeed, session.user, user, T), ctx.quick ? 3 : 10);
  ctx.report({ case: 'ksk_generate', metric: 'time_ms', value: ms(kskNs), unit: 'ms', note: 'per user and key epoch' });
  ctx.report({
    case: 'ksk_bytes',
    metric: 'bytes',
    value: kskBytes.length,
    unit: 'B',
    note: `T = ${T}: ${ksGadget(T).digits} digits modulo q_ks < 2^50, a parts seeded`,
  });
  const kskLoadNs = timeRounds(() => h.loadKeySwitchKey(kskBytes).dispose(), ctx.quick ? 3 : 10);
  ctx.report({
    case: 'ksk_load',
    metric: 'time_ms',
    value: ms(kskLoadNs),
    unit: 'ms',
    note: 'client, once per key epoch',
  });

  // Client: expansion of a from a seed (the on-demand alternative to caching).
  const seed = h.randomSeed();
  const expandNs = core.withBuffers([seed], (sp) => {
    const out = core.alloc(8 * HE_N);
    const f = core.fn('pmf_he_expand_a');
    const t = timePerCall(() => (f(sp, 0, out, MODEL_A_ROUNDS), f(sp, 1, out, MODEL_A_ROUNDS)), {
      batch: 10,
      minMs: ctx.quick ? 200 : 500,
    });
    core.free(out);
    return t;
  });
  ctx.report({
    case: 'expand_a_ct',
    metric: 'time_us',
    value: expandNs / 1e3,
    unit: 'us',
    note: `2 limbs × 4096, ChaCha${MODEL_A_ROUNDS} (a model record's a, package format 2)`,
  });

  // Dot products at B = 1.
  const sizes = ctx.quick ? [200_000] : [200_000, 1_000_000, 5_000_000];
  const lengths = ctx.quick ? [692] : [200, 692, 1000, 5000];
  const tag = (x: number): string => (x >= 1e6 ? `${x / 1e6}M` : `${x / 1e3}K`);
  let lastModel: ClientModel | undefined;
  let lastParams: HeParams | undefined;
  for (const N of sizes) {
    const p = makeParams({ N, B: 1 });
    const t0 = performance.now();
    const model = buildModel(sk, h.newClientModel(p));
    const buildMs = performance.now() - t0;
    const rounds = N >= 5e6 ? 7 : 11;
    const bias = timeRounds(
      () => model.dot({ rows: new Uint32Array(0), counts: new Uint32Array(0) }).dispose(),
      rounds,
    );
    let perFeature = 0;
    for (const L of lengths) {
      const emails = Array.from({ length: 4 }, () => email(N, L));
      let k = 0;
      const t = timeRounds(() => model.dot(emails[k++ % emails.length]).dispose(), rounds);
      perFeature = (t - bias) / L;
      ctx.report({
        case: `dot_N${tag(N)}_L${L}`,
        metric: 'time_ms',
        value: ms(t),
        unit: 'ms',
        ...(N === 5e6 && L === 5000 ? { reference: PRETZEL.dotMs, ratio: ms(t) / PRETZEL.dotMs } : {}),
        note: `B = 1, a cached${N === sizes[0] && L === lengths[0] ? `; model built (encrypt + load) in ${buildMs.toFixed(0)} ms` : ''}`,
      });
    }
    if (N === sizes[0]) {
      ctx.report({
        case: 'shift_add',
        metric: 'time_us',
        value: perFeature / 1e3,
        unit: 'us',
        reference: PRETZEL.shiftAddUs,
        ratio: perFeature / 1e3 / PRETZEL.shiftAddUs,
        note: `(dot(L) − dot(0)) / L at N = ${tag(N)}, L = ${lengths.at(-1)}`,
      });
      const lazy = buildModel(sk, h.newClientModel(p, { aCacheBytes: 0 }));
      const e = email(N, 692);
      const t = timeRounds(() => lazy.dot(e).dispose(), 5);
      ctx.report({
        case: `dot_ondemand_N${tag(N)}_L692`,
        metric: 'time_ms',
        value: ms(t),
        unit: 'ms',
        note: 'a expanded from seeds per email',
      });
      lazy.dispose();
    }
    if (N === 5e6) {
      const own = heLayout(p).bodyBytes + heLayout(p).ctCount * 2 * HE_N * 8;
      ctx.report({
        case: 'dot_peak_N5M',
        metric: 'peak_bytes',
        value: core.heap.buffer.byteLength,
        unit: 'B',
        note: `wasm linear memory after loading N = 5M and running dot; the model itself holds ${(own / 1e6).toFixed(1)} MB (packed b + cached a)`,
      });
    }
    lastModel?.dispose();
    lastModel = model;
    lastParams = p;
  }

  // Extraction and decryption (spam path: one coefficient).
  const model = lastModel!;
  const params = lastParams!;
  const acc = model.dot(email(params.N, 692, 3));
  const extractNs = timeRounds(() => model.extract(acc, [0], session.pk, session.ksk), ctx.quick ? 20 : 50);
  ctx.report({
    case: 'extract',
    metric: 'time_ms',
    value: ms(extractNs),
    unit: 'ms',
    note: "fresh Enc(0), blind, flood, drop q1, key switch to n' = 2048, extract, switch to 2^Q, pack",
  });
  const [x] = model.extract(acc, [0], session.pk, session.ksk);
  const decNs = timePerCall(() => session.user.forContext(params).decryptLwe(x.lwe), {
    batch: 100,
    minMs: ctx.quick ? 300 : 1000,
  });
  ctx.report({
    case: 'decrypt',
    metric: 'time_us',
    value: decNs / 1e3,
    unit: 'us',
    reference: PRETZEL.decryptUs,
    ratio: decNs / 1e3 / PRETZEL.decryptUs,
    note: "unpack + inner product of length n' = 2048, incl. JS copy-in",
  });
  acc.dispose();
  model.dispose();

  for (const T of [24, 32]) {
    const bytes = heLayout(makeParams({ N: 1, B: 1, T })).lweBytes;
    ctx.report({
      case: `lwe_bytes_T${T}`,
      metric: 'bytes',
      value: bytes,
      unit: 'B',
      reference: PRETZEL.ctBytes,
      ratio: bytes / PRETZEL.ctBytes,
      note: `Q = ${T + Q_MINUS_T}`,
    });
  }
  for (const [N, B] of [
    [200_000, 1],
    [1_000_000, 1],
    [5_000_000, 1],
    [20_000, 2048],
    [100_000, 2048],
  ]) {
    const bytes = heLayout(makeParams({ N, B })).bodyBytes;
    const ref = N === 5e6 ? PRETZEL.spamModelBytes : N === 20_000 ? PRETZEL.topicsModelBytes : undefined;
    ctx.report({
      case: `model_bytes_N${tag(N)}_B${B}`,
      metric: 'bytes',
      value: bytes,
      unit: 'B',
      ...(ref ? { reference: ref, ratio: bytes / ref } : {}),
      note: ref && B === 1 ? 'Pretzel used B = 2' : undefined,
    });
  }

  if (!ctx.quick) await topics(ctx, sk, session);
  await nodeSeal(ctx, 200_000, 692, ctx.quick, decNs / 1e3);
  session.dispose();
  sk.dispose();
}

async function topics(ctx: BenchContext, sk: ProviderKey, session: LocalSession): Promise<void> {
  const h = await loadHe();
  const p = makeParams({ N: 20_000, B: 2048 });
  // 10 001 ciphertexts: expanded a would take 655 MB, so this model expands on demand.
  const model = buildModel(sk, h.newClientModel(p, { aCacheBytes: 0 }));
  const e = email(p.N, 692, 3);
  const dotNs = timeRounds(() => model.dot(e).dispose(), 3);
  ctx.report({
    case: 'topics_dot_N20K_B2048_L692',
    metric: 'time_ms',
    value: ms(dotNs),
    unit: 'ms',
    note: 'a expanded on demand',
  });
  const acc = model.dot(e);
  const idx = Array.from({ length: 20 }, () => randomInt(0, 2048));
  const exNs = timeRounds(() => model.extract(acc, idx, session.pk, session.ksk), 3);
  ctx.report({
    case: 'topics_extract_20',
    metric: 'time_ms',
    value: ms(exNs),
    unit: 'ms',
    note: "B' = 20 LWE ciphertexts",
  });
  acc.dispose();
  model.dispose();
}

// node-seal's typings describe its factory objects loosely; the peer is only
// driven here, so its values are left untyped.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Seal = any;

/** SEAL's own way: weights batched 4096 per ciphertext, one multiplyPlain per touched chunk, slot sum. */
async function nodeSeal(ctx: BenchContext, N: number, L: number, quick: boolean, oursDecryptUs: number): Promise<void> {
  const require = createRequire(import.meta.url);
  const SEAL = require('node-seal') as () => Promise<Seal>;
  const seal = await SEAL();
  const n = HE_N; // the same ring dimension as ours
  const parms = seal.EncryptionParameters(seal.SchemeType.bfv);
  parms.setPolyModulusDegree(n);
  parms.setCoeffModulus(seal.CoeffModulus.BFVDefault(n));
  parms.setPlainModulus(seal.PlainModulus.Batching(n, 20));
  const context = seal.Context(parms, true, seal.SecurityLevel.tc128);
  const keygen = seal.KeyGenerator(context);
  const publicKey = keygen.createPublicKey();
  const galois = keygen.createGaloisKeys();
  const encryptor = seal.Encryptor(context, publicKey);
  const decryptor = seal.Decryptor(context, keygen.secretKey());
  const evaluator = seal.Evaluator(context);
  const encoder = seal.BatchEncoder(context);
  const t = Number(parms.plainModulus.value);

  const weights = Int32Array.from({ length: N + 1 }, () => randomInt(-127, 128));
  const chunks = Math.ceil((N + 1) / n);
  const model = Array.from({ length: chunks }, (_, c) => {
    const pt = encoder.encode(Int32Array.from({ length: n }, (_, i) => weights[c * n + i] ?? 0));
    const ct = encryptor.encrypt(pt);
    pt.delete();
    return ct;
  });
  const e = email(N, L);
  const dot = (): Seal => {
    const byChunk = new Map<number, Int32Array>([[0, new Int32Array(n)]]);
    byChunk.get(0)![0] = 1; // bias
    e.rows.forEach((r, i) => {
      const c = Math.floor(r / n);
      if (!byChunk.has(c)) byChunk.set(c, new Int32Array(n));
      byChunk.get(c)![r % n] += e.counts[i];
    });
    let acc: Seal;
    for (const [c, xs] of byChunk) {
      const pt = encoder.encode(xs);
      const prod = evaluator.multiplyPlain(model[c], pt);
      pt.delete();
      if (acc) {
        evaluator.add(acc, prod, acc);
        prod.delete();
      } else acc = prod;
    }
    const sum = evaluator.sumElements(acc, galois, seal.SchemeType.bfv);
    acc.delete();
    return sum;
  };
  const rounds = quick ? 3 : 7;
  const samples: number[] = [];
  let last: Seal;
  for (let i = 0; i <= rounds; i++) {
    const t0 = process.hrtime.bigint();
    const r = dot();
    const dt = Number(process.hrtime.bigint() - t0);
    if (i > 0) samples.push(dt);
    if (last) last.delete();
    last = r;
  }
  // Check the peer computed the right thing before reporting its time.
  let expect = BigInt(weights[0]);
  e.rows.forEach((r, i) => (expect += BigInt(weights[r]) * BigInt(e.counts[i])));
  const decoded = encoder.decode(decryptor.decrypt(last), true)[0];
  const want = Number(BigInt.asIntN(32, ((expect % BigInt(t)) + BigInt(t)) % BigInt(t)));
  const centered = want > t / 2 ? want - t : want;
  if (decoded !== centered) throw new Error(`node-seal dot product mismatch: ${decoded} vs ${centered}`);

  const ours = await oursAt(N, L);
  const sealMs = ms(median(samples));
  ctx.report({
    case: `nodeseal_dot_N${N / 1000}K_L${L}`,
    metric: 'time_ms',
    value: sealMs,
    unit: 'ms',
    ratio: sealMs / ours,
    note: `node-seal ${seal.Version}, BFV n = 4096, ${model.length} model cts; ratio = SEAL / ours (${ours.toFixed(2)} ms)`,
  });
  const ctBytes = last.saveArray(seal.ComprModeType.none).length;
  const ctZstd = last.saveArray(seal.ComprModeType.zstd).length;
  ctx.report({
    case: 'nodeseal_ct_bytes',
    metric: 'bytes',
    value: ctBytes,
    unit: 'B',
    note: `${ctZstd} B zstd-compressed; ours ${heLayout(makeParams({ N: 1, B: 1 })).lweBytes} B at T = 24`,
  });
  const decNs = timePerCall(() => decryptor.decrypt(last).delete(), { minMs: quick ? 200 : 500 });
  ctx.report({
    case: 'nodeseal_decrypt',
    metric: 'time_us',
    value: decNs / 1e3,
    unit: 'us',
    ratio: decNs / 1e3 / oursDecryptUs,
    note: `ratio = SEAL / ours (${oursDecryptUs.toFixed(1)} us)`,
  });
  last.delete();
  for (const ct of model) ct.delete();
}

/** Our dot product at the same size, measured alongside for the ratio. */
async function oursAt(N: number, L: number): Promise<number> {
  const h = await loadHe();
  const sk = h.loadSecretKey(h.generateSecretKey());
  const model = buildModel(sk, h.newClientModel(makeParams({ N, B: 1 })));
  const e = email(N, L);
  const t = ms(timeRounds(() => model.dot(e).dispose(), 7));
  model.dispose();
  sk.dispose();
  return t;
}
