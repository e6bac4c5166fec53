// The model package container (docs/wire-formats.md#model-package). Byte layout:
//
//   8 bytes  magic "PMFPKG\0\1" (the last byte is the container version)
//   u32      header length (big-endian), at most MAX_HEADER_BYTES
//   header   UTF-8 JSON (PackageHeader)
//   body     the lattice layer's encrypted model body (bodyBytes bytes)
//
// The header carries the parameters, the feature spec, the SHA-256 of the body
// and `providerSeed`: publishing the seed in a package that is byte-identical
// for every client, before any client picks its nonce, is the provider's
// commitment of docs/crypto.md#per-session-public-key (it cannot choose p1 after seeing the nonce). The header
// holds no secret: the secret key never enters a package.
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToHex } from '@noble/hashes/utils.js';
import type { HeParams } from '../wasm/ts/he.js';
import { LEGACY_MODEL_A_ROUNDS, MODEL_A_ROUNDS, type ModelARounds } from '../wasm/ts/he-params.js';
import { MAX_T } from '../wasm/ts/limits.js';
import { MAX_B_PRIME, MAX_HEADER_BYTES } from './limits.js';

export const PACKAGE_MAGIC = new Uint8Array([0x50, 0x4d, 0x46, 0x50, 0x4b, 0x47, 0x00, 0x01]);
/** What a provider builds: the records' a expanded with ChaCha8. */
export const PACKAGE_FORMAT = 'pmf-model-package/2';
/** Format 1 (ChaCha20 expansion), still read: a stored package keeps loading. */
export const LEGACY_PACKAGE_FORMAT = 'pmf-model-package/1';
const A_ROUNDS: Record<string, ModelARounds> = {
  [PACKAGE_FORMAT]: MODEL_A_ROUNDS,
  [LEGACY_PACKAGE_FORMAT]: LEGACY_MODEL_A_ROUNDS,
};

/** Lattice and model parameters (docs/crypto.md#parameters, docs/wire-formats.md#model-package): the lattice layer's own. */
export type PackageParams = HeParams;

export interface PackageHeader {
  format: typeof PACKAGE_FORMAT | typeof LEGACY_PACKAGE_FORMAT;
  modelId: string;
  modelVersion: number;
  task: 'spam' | 'topics';
  algorithm: string;
  labels: string[];
  /** The feature extractor's spec (models/features), so the client extracts what the provider trained on. */
  featureSpec: Record<string, unknown>;
  params: PackageParams;
  /** "rows-across": docs/crypto.md#model-encryption-and-packing packing; row 0 is the bias row with the threshold folded in. */
  layout: 'rows-across';
  /** Hex, 32 bytes: the provider's half of the joint randomness for p1 (docs/crypto.md#per-session-public-key). */
  providerSeed: string;
  bodyBytes: number;
  /** Hex SHA-256 of the body. */
  bodySha256: string;
  createdAt: string;
  /** Topic packages only (task = topics). */
  topics?: TopicsSection;
}

/**
 * The public candidate model (Pretzel §4.3) a topic package is used with:
 * pinned here, so the package hash (logged, and checked against the welcome)
 * pins it too, and the number B' of candidates the client sends.
 */
export interface TopicsSection {
  bPrime: number;
  /** Hex SHA-256 of the candidate model file (served at /models/<id>/<version>/candidates). */
  candidatesSha256: string;
  candidatesBytes: number;
}

/** Rounds of the XOF that expanded the package's records' a (docs/crypto.md#samplers-and-seed-expansion). */
export function packageARounds(h: PackageHeader): ModelARounds {
  return A_ROUNDS[h.format];
}

/** Pretzel's B' (§4.3): 20 candidates. */
export const DEFAULT_B_PRIME = 20;

const HEX32 = /^[0-9a-f]{64}$/;
const ID = /^[A-Za-z0-9._-]{1,64}$/;

/** Checks every header field's type and range; throws naming the first bad field. */
export function validateHeader(h: unknown): PackageHeader {
  const bad = (field: string, why: string): never => {
    throw new Error(`model package header: ${field} ${why}`);
  };
  if (typeof h !== 'object' || h === null || Array.isArray(h)) return bad('(root)', 'is not an object');
  const o = h as Record<string, unknown>;
  if (typeof o.format !== 'string' || !Object.hasOwn(A_ROUNDS, o.format))
    bad('format', `must be ${PACKAGE_FORMAT} or ${LEGACY_PACKAGE_FORMAT}`);
  if (typeof o.modelId !== 'string' || !ID.test(o.modelId)) bad('modelId', 'must match [A-Za-z0-9._-]{1,64}');
  const posInt = (v: unknown, field: string, max = 2 ** 32 - 1): void => {
    if (typeof v !== 'number' || !Number.isInteger(v) || v < 1 || v > max)
      bad(field, `must be an integer in 1..${max}`);
  };
  posInt(o.modelVersion, 'modelVersion');
  if (o.task !== 'spam' && o.task !== 'topics') bad('task', 'must be spam or topics');
  if (typeof o.algorithm !== 'string' || o.algorithm.length > 32) bad('algorithm', 'must be a short string');
  if (!Array.isArray(o.labels) || !o.labels.every((l) => typeof l === 'string')) bad('labels', 'must be strings');
  if (typeof o.featureSpec !== 'object' || o.featureSpec === null) bad('featureSpec', 'must be an object');
  if (o.layout !== 'rows-across') bad('layout', 'must be rows-across');
  if (typeof o.providerSeed !== 'string' || !HEX32.test(o.providerSeed)) bad('providerSeed', 'must be 32 bytes of hex');
  if (typeof o.bodySha256 !== 'string' || !HEX32.test(o.bodySha256)) bad('bodySha256', 'must be 32 bytes of hex');
  posInt(o.bodyBytes, 'bodyBytes', Number.MAX_SAFE_INTEGER);
  if (typeof o.createdAt !== 'string') bad('createdAt', 'must be a string');
  const p = o.params as Record<string, unknown> | undefined;
  if (typeof p !== 'object' || p === null) return bad('params', 'must be an object');
  for (const k of ['n', 'T', 'Q', 'F', 'b_in', 'f_in', 'B', 'N'] as const) posInt(p[k], `params.${k}`);
  for (const k of ['q1', 'q2'] as const) {
    if (typeof p[k] !== 'string' || !/^[1-9][0-9]{0,39}$/.test(p[k] as string))
      bad(`params.${k}`, 'must be a decimal integer');
  }
  if ((p.T as number) > MAX_T) bad('params.T', `must be at most ${MAX_T}`);
  if (o.task === 'topics') {
    const t = o.topics as Record<string, unknown> | undefined;
    if (typeof t !== 'object' || t === null) return bad('topics', 'must be an object in a topic package');
    posInt(t.bPrime, 'topics.bPrime', Math.min(MAX_B_PRIME, p.B as number));
    if (typeof t.candidatesSha256 !== 'string' || !HEX32.test(t.candidatesSha256))
      bad('topics.candidatesSha256', 'must be 32 bytes of hex');
    posInt(t.candidatesBytes, 'topics.candidatesBytes', Number.MAX_SAFE_INTEGER);
  } else if (o.topics !== undefined) bad('topics', 'is only allowed in a topic package');
  return o as unknown as PackageHeader;
}

/** Header bytes that precede the body: magic, length, JSON. */
export function encodePackagePrefix(header: PackageHeader): Uint8Array {
  const json = new TextEncoder().encode(JSON.stringify(validateHeader(header)));
  if (json.length > MAX_HEADER_BYTES) throw new Error('model package header is too large');
  const out = new Uint8Array(PACKAGE_MAGIC.length + 4 + json.length);
  out.set(PACKAGE_MAGIC, 0);
  new DataView(out.buffer).setUint32(PACKAGE_MAGIC.length, json.length);
  out.set(json, PACKAGE_MAGIC.length + 4);
  return out;
}

export interface ParsedPrefix {
  header: PackageHeader;
  /** Offset of the body in the package. */
  bodyOffset: number;
}

/**
 * Parses the magic and header from the start of a package. Returns undefined
 * if `data` is too short to hold the whole header yet (streaming callers).
 */
export function parsePackagePrefix(data: Uint8Array): ParsedPrefix | undefined {
  const m = PACKAGE_MAGIC.length;
  if (data.length < m + 4) return undefined;
  for (let i = 0; i < m; i++) {
    if (data[i] !== PACKAGE_MAGIC[i]) throw new Error('model package: bad magic or unsupported container version');
  }
  const len = new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(m);
  if (len > MAX_HEADER_BYTES) throw new Error(`model package: header of ${len} bytes exceeds ${MAX_HEADER_BYTES}`);
  if (data.length < m + 4 + len) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(data.subarray(m + 4, m + 4 + len)));
  } catch {
    throw new Error('model package: header is not valid UTF-8 JSON');
  }
  return { header: validateHeader(parsed), bodyOffset: m + 4 + len };
}

/** Parses a whole package in memory and verifies the body's length and SHA-256. */
export function openPackage(data: Uint8Array): { header: PackageHeader; body: Uint8Array } {
  const prefix = parsePackagePrefix(data);
  if (!prefix) throw new Error('model package: truncated header');
  const body = data.subarray(prefix.bodyOffset);
  if (body.length !== prefix.header.bodyBytes) {
    throw new Error(`model package: body is ${body.length} bytes, header says ${prefix.header.bodyBytes}`);
  }
  if (bytesToHex(sha256(body)) !== prefix.header.bodySha256) throw new Error('model package: body SHA-256 mismatch');
  return { header: prefix.header, body };
}
