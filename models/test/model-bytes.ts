// Test helper: builds model files from the documented layout (README.md,
// "Plaintext model format"), independently of the Python writer.
import { createHash } from 'node:crypto';
import { makeSpec } from '../features/spec.js';
import { chooseT } from '../plain/bounds.js';

export function modelBytes(
  header: Record<string, unknown>,
  weights: ArrayLike<number>,
  floats?: ArrayLike<number>,
): Uint8Array {
  const body = Buffer.alloc(weights.length * (floats ? 8 : 4));
  for (let i = 0; i < weights.length; i++) body.writeInt32LE(weights[i], i * 4);
  if (floats) for (let i = 0; i < floats.length; i++) body.writeFloatLE(floats[i], (weights.length + i) * 4);
  const full = {
    ...header,
    floatWeights: floats !== undefined,
    bodySha256: createHash('sha256').update(body).digest('hex'),
  };
  const head = Buffer.from(JSON.stringify(full));
  const pad = Buffer.alloc((8 - ((16 + head.length) % 8)) % 8);
  const pre = Buffer.alloc(16);
  pre.write('PMFPLAIN', 0, 'latin1');
  pre.writeUInt32LE(1, 8);
  pre.writeUInt32LE(head.length, 12);
  return new Uint8Array(Buffer.concat([pre, head, pad, body]));
}

/** A valid header for a model of the given shape. */
export function headerFor(opts: {
  task: 'spam' | 'topics';
  N: number;
  B: number;
  bIn: number;
  fIn?: number;
  lMax?: number;
  boolean?: boolean;
}): Record<string, unknown> {
  const spec = makeSpec({ N: opts.N, fIn: opts.fIn ?? 4, lMax: opts.lMax ?? 64, boolean: opts.boolean ?? false });
  const cap = spec.boolean ? 1 : 2 ** spec.fIn - 1;
  return {
    format: 'pmf-plain-model',
    formatVersion: 1,
    role: 'private',
    task: opts.task,
    algorithm: opts.task === 'spam' ? 'lr' : 'mnb',
    labels: opts.task === 'spam' ? ['ham', 'spam'] : Array.from({ length: opts.B }, (_, j) => `t${j}`),
    N: opts.N,
    B: opts.B,
    b_in: opts.bIn,
    f_in: spec.fIn,
    L_max: spec.lMax,
    T: chooseT(opts.bIn, cap, spec.lMax),
    featureSpec: spec,
    scale: 1,
    threshold: 0,
  };
}
