// The benchmark contract shared by every suite (see bench/run.ts).
import v8 from 'node:v8';
import vm from 'node:vm';
import { nativeSodium, useProviderNative } from '../provider-server/src/native-sodium.js';

v8.setFlagsFromString('--expose-gc');
/** A full garbage collection now: a suite that built large garbage collects it before it times anything else. */
export const collectGarbage = vm.runInNewContext('gc') as () => void;

export interface BenchRow {
  suite: string;
  case: string;
  metric: string;
  value: number;
  unit: string;
  /** A published figure this row is compared with (e.g. Pretzel's). */
  reference?: number;
  /** value / reference, or another side-by-side ratio named in `note`. */
  ratio?: number;
  note?: string;
}

export interface BenchContext {
  /** Smaller sizes so the suite finishes in under a minute. */
  quick: boolean;
  /**
   * Whether a row was asked for (`--rows a,b`; every row without it, or
   * without this function): a suite may skip the work of rows nobody asked
   * for, and rows not asked for are not printed.
   */
  wants?(row: string): boolean;
  report(row: Omit<BenchRow, 'suite'>): void;
}

export type Suite = (ctx: BenchContext) => Promise<void>;

/** Median of a list of numbers. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Times fn: runs batches of `batch` calls until `minMs` elapsed (at least
 * `minRounds` rounds) and returns the median nanoseconds per call.
 */
export function timePerCall(
  fn: () => unknown,
  opts: { batch?: number; minMs?: number; minRounds?: number } = {},
): number {
  const batch = opts.batch ?? 1;
  const minMs = opts.minMs ?? 200;
  const minRounds = opts.minRounds ?? 5;
  for (let i = 0; i < Math.min(batch, 1000); i++) fn(); // warm up the JIT
  const samples: number[] = [];
  const start = performance.now();
  while (samples.length < minRounds || performance.now() - start < minMs) {
    const t0 = process.hrtime.bigint();
    for (let i = 0; i < batch; i++) fn();
    samples.push(Number(process.hrtime.bigint() - t0) / batch);
  }
  return median(samples);
}

/** Async variant of timePerCall, one call per sample. */
export async function timeAsync(fn: () => Promise<unknown>, rounds: number): Promise<number> {
  await fn();
  const samples: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const t0 = process.hrtime.bigint();
    await fn();
    samples.push(Number(process.hrtime.bigint() - t0));
  }
  return median(samples);
}

/**
 * Runs provider-side work on what provider-server runs it on: native
 * libsodium for ristretto255 and the base-OT loop when the binding is built
 * (provider-server/native/), then back to the WebAssembly build the clients
 * (browsers) use.
 */
export function asProvider<T>(work: () => T): T {
  useProviderNative(true);
  try {
    return work();
  } finally {
    useProviderNative(false);
  }
}

export const PROVIDER_SODIUM = nativeSodium()
  ? 'the native binding (libsodium, curve25519-dalek for the batched loops), as provider-server runs it'
  : "libsodium's WebAssembly build: the native binding is not built";
