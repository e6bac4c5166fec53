// The feature specification: everything the client needs to extract exactly
// the features a model was trained on. It is public, JSON-serializable and
// carried in every model package header.
import { MAX_FIN } from '../../wasm/ts/limits.js';

export interface FeatureSpec {
  /** Extraction algorithm; bump when tokenization or hashing changes. */
  id: 'pmf-hash';
  version: 1;
  /** Feature rows are 1..N (row 0 is the model's bias row). */
  N: number;
  /** Counts are capped at 2^fIn - 1. */
  fIn: number;
  /** Boolean models see every present feature with value 1. */
  boolean: boolean;
  /** At most this many distinct rows per email (the protocol's L). */
  lMax: number;
}

export const SPEC_ID = 'pmf-hash';
export const SPEC_VERSION = 1;
/**
 * Changes with every change to what the extractor reads, also one that keeps
 * the spec's version (most mail's features stay the same, so served models
 * stay usable until retrained): the training cache is keyed on it, so no
 * features of an older extractor are trained on. 2: bounded tokenization,
 * segmented CJK/Thai, hidden HTML, header-like plain text, guessed charsets.
 */
export const EXTRACTOR_REVISION = 2;

/** Largest N the 32-bit hash can address without bias worth mentioning. */
export const MAX_N = 1 << 24;
/** Hard bound on lMax so that T stays within the lattice layer's 32 bits. */
export const MAX_L = 1 << 16;

export function makeSpec(overrides: Partial<Omit<FeatureSpec, 'id' | 'version'>> = {}): FeatureSpec {
  return validateSpec({
    id: SPEC_ID,
    version: SPEC_VERSION,
    N: 1 << 18,
    fIn: 4,
    boolean: false,
    lMax: 4096,
    ...overrides,
  });
}

/** Checks a spec read from a model header; throws a clear error if unusable. */
export function validateSpec(spec: unknown): FeatureSpec {
  if (typeof spec !== 'object' || spec === null) throw new Error('feature spec: not an object');
  const s = spec as Record<string, unknown>;
  if (s.id !== SPEC_ID) throw new Error(`feature spec: unknown id ${JSON.stringify(s.id)} (expected ${SPEC_ID})`);
  if (s.version !== SPEC_VERSION) throw new Error(`feature spec: unsupported version ${JSON.stringify(s.version)}`);
  const int = (k: string, lo: number, hi: number): number => {
    const v = s[k];
    if (typeof v !== 'number' || !Number.isInteger(v) || v < lo || v > hi)
      throw new Error(`feature spec: ${k} must be an integer in [${lo}, ${hi}], got ${JSON.stringify(v)}`);
    return v;
  };
  if (typeof s.boolean !== 'boolean') throw new Error('feature spec: boolean must be true or false');
  return {
    id: SPEC_ID,
    version: SPEC_VERSION,
    N: int('N', 1, MAX_N),
    fIn: int('fIn', 1, MAX_FIN),
    boolean: s.boolean,
    lMax: int('lMax', 1, MAX_L),
  };
}

/** The largest value a feature can take under this spec. */
export function countCap(spec: FeatureSpec): number {
  return spec.boolean ? 1 : 2 ** spec.fIn - 1;
}
