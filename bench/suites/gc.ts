// Garbled circuits and OT: per-email costs of the spam comparison and
// the topic argmax, OT extension throughput, base-OT setup, and the same
// comparison through emp-wasm (authenticated garbling) as a peer baseline.
// CPU is the sum over both roles, measured single-threaded in one process.
import { BufferQueue, secureMPC, type IO } from 'emp-wasm';
import { loadCore } from '../../wasm/ts/core.js';
import { Op, spamCircuit, type Circuit } from '../../wasm/ts/gc-circuit.js';
import {
  argmaxChoice,
  decodeArgmaxLabels,
  evaluateArgmax,
  evaluateSpam,
  garbleArgmax,
  garbleSpam,
  spamChoice,
} from '../../wasm/ts/gc.js';
import { OtReceiver, OtSender } from '../../wasm/ts/ot.js';
import { median, timePerCall, type BenchContext } from '../lib.js';

const PRETZEL_CMP_US = 71;
const PRETZEL_CMP_BYTES = 2501;
const PRETZEL_ARGMAX_US = 70;
const PRETZEL_ARGMAX_BYTES = 3959;
/** Topic-index bits for B = 2048 categories. */
const INDEX_BITS = 11;
/** Extension batch used for the throughput row and the amortized OT cost. */
const BATCH = 1 << 16;

const rand = (bits: number): number => Math.floor(Math.random() * 2 ** bits);

export default async function gc(ctx: BenchContext): Promise<void> {
  const core = await loadCore();
  const minMs = ctx.quick ? 150 : 1000;

  // Base OTs: one full setup, both roles.
  const setups: number[] = [];
  let client!: OtReceiver;
  let provider!: OtSender;
  for (let i = 0; i < (ctx.quick ? 1 : 3); i++) {
    const t0 = performance.now();
    const sessionId = core.randomBytes(16);
    client = new OtReceiver(core, sessionId);
    provider = new OtSender(core, sessionId);
    client.finish(provider.respond(client.start()));
    setups.push(performance.now() - t0);
  }
  ctx.report({
    case: 'base_ot_session',
    metric: 'time_ms',
    value: median(setups),
    unit: 'ms',
    note: '128 Chou-Orlandi OTs over ristretto255 (@noble/curves), both roles; 4.1 KB on the wire',
  });

  // OT extension throughput: extend + verify (KOS) of one batch, both roles.
  // Mean, not median: the garbage of 1 MB batches is part of the extension's cost.
  const batches = ctx.quick ? 4 : 16;
  const c0 = process.cpuUsage();
  for (let i = 0; i < batches; i++) {
    provider.acceptExtension(client.extend(BATCH - 256));
    client.take(client.available);
    provider.take(provider.nextOffset, provider.available);
  }
  const c1 = process.cpuUsage(c0);
  const extUs = (c1.user + c1.system) / batches;
  const perOtNs = (1000 * extUs) / (BATCH - 256);
  ctx.report({
    case: 'ot_extension',
    metric: 'ops_per_s',
    value: Math.round(1e9 / perOtNs),
    unit: 'OT/s',
    note: `IKNP + KOS check, batches of ${BATCH} (256 sacrificed), both roles; 16 B/OT on the wire`,
  });
  const topUp = (n: number): void => {
    while (client.available < n) provider.acceptExtension(client.extend(BATCH - 256));
  };

  // One spam comparison: choice + garble + evaluate (online, per email).
  for (let i = 0; i < 300; i++) {
    // Warm the whole pipeline up so the first row is not charged for JIT compilation.
    topUp(24);
    const { message, pending } = spamChoice(client, { rPrime: rand(24), T: 24 });
    evaluateSpam(pending, garbleSpam({ y: rand(24), T: 24 }, provider, message));
  }
  for (const T of [24, 32]) {
    let bytes = 0;
    const run = (): void => {
      const { message, pending } = spamChoice(client, { rPrime: rand(T), T });
      const g = garbleSpam({ y: rand(T), T }, provider, message);
      evaluateSpam(pending, g);
      bytes = message.length + g.length;
    };
    const online = cpuPerCall(run, (calls) => topUp(calls * T), 10, minMs);
    const us = online + (T * perOtNs) / 1000;
    const total = bytes + 16 * T;
    ctx.report({
      case: `cmp_T${T}`,
      metric: 'cpu_us',
      value: us,
      unit: 'us',
      reference: PRETZEL_CMP_US,
      ratio: us / PRETZEL_CMP_US,
      note: `both roles: ${online.toFixed(1)} online + ${T} OTs of amortized extension`,
    });
    ctx.report({
      case: `cmp_T${T}`,
      metric: 'bytes',
      value: total,
      unit: 'B',
      reference: PRETZEL_CMP_BYTES,
      ratio: total / PRETZEL_CMP_BYTES,
      note: `${bytes} online (choice bits, tables, garbler label seed, digests) + ${16 * T} OT extension`,
    });
  }

  // Argmax per input value at T = 24, B = 2048.
  const T = 24;
  for (const n of [5, 10, 20, 40]) {
    let bytes = 0;
    const run = (): void => {
      const ys = Array.from({ length: n }, () => rand(T));
      const rPrimes = Array.from({ length: n }, () => rand(T));
      const indices = Array.from({ length: n }, () => rand(INDEX_BITS));
      const { message, pending } = argmaxChoice(client, { rPrimes, indices, T, indexBits: INDEX_BITS });
      const { message: g, decoder } = garbleArgmax({ ys, T, indexBits: INDEX_BITS }, provider, message);
      const labels = evaluateArgmax(pending, g);
      decodeArgmaxLabels(decoder, labels);
      bytes = message.length + g.length + labels.length;
    };
    const calls = Math.max(1, Math.round(40 / n));
    const online = cpuPerCall(run, (k) => topUp(k * n * (T + INDEX_BITS)), calls, minMs) / n;
    const us = online + ((T + INDEX_BITS) * perOtNs) / 1000;
    const total = bytes / n + 16 * (T + INDEX_BITS);
    ctx.report({
      case: `argmax_per_input_B${n}`,
      metric: 'cpu_us',
      value: us,
      unit: 'us',
      reference: PRETZEL_ARGMAX_US,
      ratio: us / PRETZEL_ARGMAX_US,
      note: `T=${T}, ${INDEX_BITS}-bit indices, both roles: ${online.toFixed(1)} online + ${T + INDEX_BITS} OTs of amortized extension`,
    });
    ctx.report({
      case: `argmax_per_input_B${n}`,
      metric: 'bytes',
      value: total,
      unit: 'B',
      reference: PRETZEL_ARGMAX_BYTES,
      ratio: total / PRETZEL_ARGMAX_BYTES,
      note: `${(bytes / n).toFixed(0)} online (choice, tables, garbler label seed, output labels) + ${16 * (T + INDEX_BITS)} OT extension`,
    });
  }

  // The label hash alone (4 lanes per call, as the garbler uses it).
  const x = core.alloc(64);
  const out = core.alloc(64);
  const hash = core.fn('pmf_gc_hash');
  const hashNs = timePerCall(() => hash(x, 4, 0, 0, out), { batch: 10_000, minMs });
  core.free(x);
  core.free(out);
  ctx.report({
    case: 'hash_4way',
    metric: 'time_ns',
    value: hashNs,
    unit: 'ns',
    note: 'ChaCha20 label hash, 4 labels per call',
  });

  await empWasm(ctx);
  client.close();
  provider.close();
}

/**
 * Median process CPU time (user + system) per call of run in microseconds,
 * over rounds of `calls` calls; prepare(calls) runs untimed before each round
 * (OT pool top-ups belong to the precomputation phase). Both roles run in this
 * process. CPU time rather than wall time, because the machine is shared; the
 * median drops rounds that absorb a garbage collection.
 */
function cpuPerCall(run: () => void, prepare: (calls: number) => void, calls: number, minMs: number): number {
  prepare(calls);
  for (let i = 0; i < calls; i++) run(); // warm up the JIT
  const samples: number[] = [];
  const start = performance.now();
  while (samples.length < 15 || performance.now() - start < minMs) {
    prepare(calls);
    const t0 = process.cpuUsage();
    for (let i = 0; i < calls; i++) run();
    const t = process.cpuUsage(t0);
    samples.push((t.user + t.system) / calls);
  }
  return median(samples);
}

/** The T = 32 spam comparison through emp-wasm's authenticated garbling, both parties in process. */
async function empWasm(ctx: BenchContext): Promise<void> {
  const T = 32;
  const circuit = toBristol(spamCircuit(T));
  const runs: number[] = [];
  let bytes = 0;
  for (let i = 0; i < (ctx.quick ? 1 : 3); i++) {
    const queues = new Map<string, BufferQueue>();
    const q = (from: number, to: number, ch: string): BufferQueue => {
      const k = `${from}>${to}:${ch}`;
      if (!queues.has(k)) queues.set(k, new BufferQueue());
      return queues.get(k)!;
    };
    let sent = 0;
    const io = (me: number): IO => ({
      send: (to, ch, data) => {
        sent += data.length;
        q(me, to, ch).push(data);
      },
      recv: (from, ch, min, max) => q(from, me, ch).pop(min, max),
    });
    const y = rand(T);
    const r = rand(T);
    const bits = (v: number): Uint8Array => Uint8Array.from({ length: T }, (_, k) => (v >>> k) & 1);
    const t0 = process.cpuUsage();
    const [a, b] = await Promise.all([
      secureMPC({ party: 0, size: 2, circuit, inputBits: bits(y), inputBitsPerParty: [T, T], io: io(0), mode: '2pc' }),
      secureMPC({ party: 1, size: 2, circuit, inputBits: bits(r), inputBitsPerParty: [T, T], io: io(1), mode: '2pc' }),
    ]);
    const cpu = process.cpuUsage(t0);
    const expected = (y + r) % 2 ** T < 2 ** (T - 1) ? 1 : 0;
    if (a[0] !== expected || b[0] !== expected) throw new Error('emp-wasm comparison gave a wrong result');
    runs.push(cpu.user + cpu.system);
    bytes = sent;
  }
  const us = median(runs);
  ctx.report({
    case: 'empwasm_cmp_T32',
    metric: 'cpu_us',
    value: us,
    unit: 'us',
    reference: PRETZEL_CMP_US,
    ratio: us / PRETZEL_CMP_US,
    note: 'emp-wasm 0.3.2 authenticated garbling (2pc mode), both parties, incl. its per-run setup',
  });
  ctx.report({
    case: 'empwasm_cmp_T32',
    metric: 'bytes',
    value: bytes,
    unit: 'B',
    reference: PRETZEL_CMP_BYTES,
    ratio: bytes / PRETZEL_CMP_BYTES,
    note: 'both directions',
  });
}

/** Bristol format (the one emp-wasm reads) of a circuit whose output is its last wire. */
function toBristol(c: Circuit): string {
  if (c.outputs.length !== 1 || c.outputs[0] !== c.nwires - 1)
    throw new Error('toBristol: output must be the last wire');
  const lines = c.gates.map(([op, a, b, o]) =>
    op === Op.And ? `2 1 ${a} ${b} ${o} AND` : op === Op.Xor ? `2 1 ${a} ${b} ${o} XOR` : `1 1 ${a} ${o} INV`,
  );
  return [`${c.gates.length} ${c.nwires}`, `${c.garblerInputs} ${c.evaluatorInputs} 1`, '', ...lines, ''].join('\n');
}
