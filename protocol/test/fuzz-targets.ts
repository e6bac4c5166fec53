// Property-based fuzzing (fast-check) of every parser that reads bytes a peer
// chose: frames and message schemas, the model package, the package log, the
// OT and garbled-circuit messages, and the lattice objects (LWE ciphertext, public key, key-switching
// key). Each target must either accept its input or reject it with an Error;
// never trap inside WebAssembly, never throw a bare TypeError/RangeError from
// deep inside, never hang. Accepted frames must be canonical: re-encoding a
// decoded message gives back the same bytes.
//
// `fuzz.test.ts` runs a short pass in the default suite; `fuzz.slow.test.ts`
// a long one. A crash found becomes a regression test beside the target.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { ProtocolError } from '../errors.js';
import { decodeFrame, encodeFrame } from '../frame.js';
import { decodeMessage, encodeMessage, SCHEMAS, type Message, type MessageName } from '../messages.js';
import { encodePackagePrefix, openPackage, parsePackagePrefix } from '../package.js';
import { parseCheckpoint } from '../checkpoint.js';
import { validateLogDocument, validateProofBundle } from '../package-log.js';
import { parseNote, parseVerifierKey } from '../signed-note.js';
import { parseWitnessPolicy } from '../witness-policy.js';
import {
  applyDelta,
  encodeDelta,
  encodeList,
  makeEntry,
  openList,
  oprfReady,
  validateListHeader,
} from '../blocklist.js';
import { samplePackageHeader } from './sample-package.js';
import { loadCore } from '../../wasm/ts/core.js';
import { heLayout, loadHe, makeParams } from '../../wasm/ts/he.js';
import { OtReceiver, OtSender } from '../../wasm/ts/ot.js';
import { CoreError } from '../../wasm/ts/status.js';
import {
  argmaxChoice,
  decodeArgmaxLabels,
  evaluateArgmax,
  evaluateSpam,
  garbleArgmax,
  garbleSpam,
  spamChoice,
  type PendingEvaluation,
} from '../../wasm/ts/gc.js';
import { ProtocolError as OtProtocolError } from '../../wasm/ts/ot-wire.js';

type FieldSpec = (typeof SCHEMAS)[MessageName]['fields'][number];

// The decoder refuses exactly these (C0, DEL, C1).
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

/** A field value the schema allows (strings without control characters). */
function fieldArb(f: FieldSpec): fc.Arbitrary<unknown> {
  if (f.kind === 'u32') return fc.nat({ max: 0xffffffff });
  if (f.kind === 'str') {
    const printable = fc.string({ unit: 'grapheme', maxLength: 40 }).filter((s) => !CONTROL.test(s));
    return printable.filter((s) => new TextEncoder().encode(s).length <= f.max);
  }
  return fc.uint8Array({ minLength: f.min, maxLength: Math.min(f.max, Math.max(f.min, 300)) });
}

const messageArb: fc.Arbitrary<{ name: MessageName; requestId: number; fields: Record<string, unknown> }> = fc
  .constantFrom(...(Object.keys(SCHEMAS) as MessageName[]))
  .chain((name) =>
    fc.record({
      name: fc.constant(name),
      requestId: fc.nat({ max: 0xffffffff }),
      fields: fc.record(
        Object.fromEntries((SCHEMAS[name].fields as readonly FieldSpec[]).map((f) => [f.name, fieldArb(f)])),
      ),
    }),
  );

const writesArb = fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 6 });

/** `bytes` with some bytes overwritten, then cut and extended. */
function mutate(bytes: Uint8Array, writes: [number, number][], cut: number | null, tail: Uint8Array): Uint8Array {
  const b = bytes.slice();
  for (const [at, v] of writes) if (b.length > 0) b[at % b.length] = v;
  return Uint8Array.from([...b.subarray(0, cut === null ? b.length : cut % (b.length + 1)), ...tail]);
}

/**
 * Mutations a hostile peer tries on a valid message: on the whole frame, or on
 * the body re-framed with a consistent length (so the body parser is reached).
 */
const mutatedArb = fc
  .tuple(messageArb, fc.boolean(), writesArb, fc.option(fc.nat()), fc.uint8Array({ maxLength: 16 }))
  .map(([m, bodyOnly, writes, cut, tail]) => {
    const bytes = encodeMessage(m.name, m.requestId, m.fields as never);
    if (!bodyOnly) return mutate(bytes, writes, cut, tail);
    const frame = decodeFrame(bytes, 1 << 24);
    return encodeFrame(frame.type, frame.requestId, mutate(frame.body, writes, cut, tail));
  });

/** A valid message with a few bytes overwritten (same length). */
const mutationsOf = (valid: Uint8Array) => writesArb.map((writes) => mutate(valid, writes, null, new Uint8Array(0)));
const anyBytes = fc.uint8Array({ maxLength: 200 });

function fieldsOf(m: Message): Record<string, unknown> {
  const { name: _n, requestId: _r, ...fields } = m;
  return fields;
}

/** What a trap inside WebAssembly throws (a memory fault, an abort): never acceptable. */
const WasmTrap = (globalThis as unknown as { WebAssembly: { RuntimeError: typeof Error } }).WebAssembly.RuntimeError;

/** Accepted, or rejected with one of the errors the target is allowed to throw. */
function acceptsOrRejects(fn: () => unknown, allowed: (e: unknown) => boolean): void {
  try {
    fn();
  } catch (e) {
    if (e instanceof WasmTrap) throw new Error(`WebAssembly trap: ${e.message}`);
    if (!allowed(e)) throw e;
  }
}
const isProtocolError = (e: unknown) => e instanceof ProtocolError;
const isOtError = (e: unknown) => e instanceof OtProtocolError;
/** A named, plain Error (not a TypeError or RangeError escaping from deep inside). */
const isPlainError = (e: unknown) => e instanceof Error && e.constructor === Error && e.message.length > 0;
/** The WASM core's refusal: a status code the core returned, not a trap. */
const isCoreError = (e: unknown) => e instanceof CoreError;

export async function registerFuzzTargets(runs: number): Promise<void> {
  const opts = { numRuns: runs };

  test('frames: a message round-trips through encode and decode', () => {
    fc.assert(
      fc.property(messageArb, (m) => {
        const decoded = decodeMessage(encodeMessage(m.name, m.requestId, m.fields as never), 1 << 24);
        assert.equal(decoded.name, m.name);
        assert.equal(decoded.requestId, m.requestId);
        assert.deepEqual(fieldsOf(decoded), { ...m.fields });
      }),
      opts,
    );
  });

  test('frames: any bytes decode to a canonical message or a ProtocolError', () => {
    const check = (bytes: Uint8Array) =>
      acceptsOrRejects(() => {
        const m = decodeMessage(bytes, 1 << 24);
        assert.deepEqual(encodeMessage(m.name, m.requestId, fieldsOf(m) as never), bytes, 'non-canonical frame');
      }, isProtocolError);
    fc.assert(fc.property(fc.uint8Array({ maxLength: 200 }), check), opts);
    fc.assert(fc.property(mutatedArb, check), opts);
  });

  const body = new Uint8Array([1, 2, 3, 4]);
  const header = samplePackageHeader(body);
  test('model package: any bytes or a damaged package give a clear error', () => {
    const prefix = encodePackagePrefix(header);
    const damaged = fc
      .tuple(fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 4 }), fc.nat())
      .map(([writes, cut]) => {
        const b = Uint8Array.from([...prefix, ...body]);
        for (const [at, v] of writes) b[at % b.length] = v;
        return b.subarray(0, cut % (b.length + 1));
      });
    const check = (bytes: Uint8Array) => {
      acceptsOrRejects(() => parsePackagePrefix(bytes), isPlainError);
      acceptsOrRejects(() => openPackage(bytes), isPlainError);
    };
    fc.assert(fc.property(fc.uint8Array({ maxLength: 300 }), check), opts);
    fc.assert(fc.property(damaged, check), opts);
  });

  test('blocklist: any bytes or a damaged list or delta package give a clear error', async () => {
    await oprfReady();
    const entry = (i: number) => makeEntry(new Uint8Array(64).fill(i), { category: 0, score: i, sinceDay: i });
    const list = (version: number, n: number) =>
      encodeList(
        { listId: 'l', version, categories: ['c'], createdAt: 't' },
        Array.from({ length: n }, (_, i) => entry(i + version)),
      );
    const v1 = openList(list(1, 3));
    const delta = encodeDelta(v1, openList(list(2, 3)));
    const damaged = (valid: Uint8Array) =>
      fc
        .tuple(writesArb, fc.option(fc.nat()), fc.uint8Array({ maxLength: 16 }))
        .map(([w, cut, tail]) => mutate(valid, w, cut, tail));
    const check = (bytes: Uint8Array) => {
      acceptsOrRejects(() => openList(bytes), isPlainError);
      acceptsOrRejects(() => applyDelta(v1, bytes), isPlainError);
    };
    fc.assert(fc.property(anyBytes, check), opts);
    fc.assert(fc.property(damaged(list(1, 3)), check), opts);
    fc.assert(fc.property(damaged(delta), check), opts);
    fc.assert(
      fc.property(fc.jsonValue(), (h) => acceptsOrRejects(() => validateListHeader(h), isPlainError)),
      opts,
    );
  });

  test('package log: any JSON value is a valid document or a clear error', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (doc) => acceptsOrRejects(() => validateLogDocument(doc), isPlainError)),
      opts,
    );
  });

  test('package log proofs and witness policies: any JSON value is valid or a clear error', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (x) => {
        acceptsOrRejects(() => validateProofBundle(x), isPlainError);
        acceptsOrRejects(() => parseWitnessPolicy(x), isPlainError);
      }),
      opts,
    );
  });

  test('signed notes, checkpoints and verifier keys: any text parses or is a clear error', () => {
    const noteLike = fc.array(fc.oneof(fc.string(), fc.constantFrom('\n', '\n\n', '\u2014 ', '+', 'AAAA=')), {
      maxLength: 12,
    });
    fc.assert(
      fc.property(noteLike, (parts) => {
        const text = parts.join('');
        acceptsOrRejects(() => parseNote(text), isPlainError);
        acceptsOrRejects(() => parseCheckpoint(text), isPlainError);
        acceptsOrRejects(() => parseVerifierKey(text), isPlainError);
      }),
      opts,
    );
  });

  const core = await loadCore();
  const context = new TextEncoder().encode('fuzz-session');
  test('OT: any base-OT or extension message is accepted or a ProtocolError, never a trap', () => {
    const client = new OtReceiver(core, context);
    const provider = new OtSender(core, context);
    const baseA = client.start();
    const baseB = provider.respond(baseA);
    client.finish(baseB);
    const ext = client.extend(1000);

    const asSender = (m: Uint8Array) => acceptsOrRejects(() => new OtSender(core, context).respond(m), isOtError);
    const asReceiver = (m: Uint8Array) =>
      acceptsOrRejects(() => {
        const r = new OtReceiver(core, context);
        r.start();
        r.finish(m);
      }, isOtError);
    // Extensions go to a throwaway sender each time: one that accepted a batch moves on.
    const asExtension = (m: Uint8Array) =>
      acceptsOrRejects(() => {
        const s = new OtSender(core, context);
        const r = new OtReceiver(core, context);
        r.finish(s.respond(r.start()));
        s.acceptExtension(m);
      }, isOtError);
    fc.assert(fc.property(fc.oneof(anyBytes, mutationsOf(baseA)), asSender), { numRuns: Math.ceil(runs / 20) });
    fc.assert(fc.property(fc.oneof(anyBytes, mutationsOf(baseB)), asReceiver), { numRuns: Math.ceil(runs / 20) });
    fc.assert(fc.property(fc.oneof(anyBytes, mutationsOf(ext)), asExtension), { numRuns: Math.ceil(runs / 40) });
  });

  test('garbled circuits: any gc_choice, gc_spam, gc_argmax or gc_labels is accepted or a ProtocolError', () => {
    /** A fresh OT pair: each target starts with both pools in step. */
    const newPair = () => {
      const c = new OtReceiver(core, context);
      const p = new OtSender(core, context);
      c.finish(p.respond(c.start()));
      return [c, p] as const;
    };
    let [client, provider] = newPair();
    const pair = () => {
      [client, provider] = newPair();
    };
    const ots = (n: number) => {
      // A refused gc message leaves the OTs the client took unused on the
      // provider's side; skip them as the next real request would, or the
      // provider's pool fills up and refuses the next extension (a failure of
      // the harness, not of the input).
      const clientNext = provider.nextOffset + provider.available - client.available;
      if (clientNext > provider.nextOffset) provider.take(clientNext, 0);
      if (client.available < n) provider.acceptExtension(client.extend(8192));
    };
    const T = 24;
    const shape = { T, indexBits: 5 };
    const spam = () => {
      ots(T);
      return spamChoice(client, { rPrime: 12345, T });
    };
    const argmax = () => {
      ots(4 * (T + 5));
      return argmaxChoice(client, { rPrimes: [1, 2, 3, 4], indices: [3, 1, 4, 1], ...shape });
    };
    const validChoice = spam();
    const validGc = garbleSpam({ y: 777, T }, provider, validChoice.message);
    validChoice.pending.dispose();
    const validArgmaxChoice = argmax();
    const validArgmax = garbleArgmax({ ys: [5, 6, 7, 8], ...shape }, provider, validArgmaxChoice.message);
    const validLabels = evaluateArgmax(validArgmaxChoice.pending, validArgmax.message);
    validArgmax.decoder.dispose();
    const asChoice = (m: Uint8Array) => {
      ots(T);
      acceptsOrRejects(() => garbleSpam({ y: 1, T }, provider, m), isOtError);
    };
    /** Evaluates `m` against a fresh pending evaluation from `choose`, which is wiped afterwards. */
    const asGc =
      <R>(choose: () => { pending: PendingEvaluation }, evaluate: (p: PendingEvaluation, m: Uint8Array) => R) =>
      (m: Uint8Array) => {
        const { pending } = choose();
        try {
          acceptsOrRejects(() => evaluate(pending, m), isOtError);
        } finally {
          pending.dispose();
        }
      };
    const asLabels = (m: Uint8Array) => {
      const { message, pending } = argmax();
      pending.dispose();
      const { decoder } = garbleArgmax({ ys: [5, 6, 7, 8], ...shape }, provider, message);
      acceptsOrRejects(() => decodeArgmaxLabels(decoder, m), isOtError);
    };
    const few = { numRuns: Math.ceil(runs / 4) };
    // A mutated but valid gc_choice makes the provider take OTs the client never
    // chose: the choice target gets its own pair, so the others stay in step.
    pair();
    fc.assert(fc.property(fc.oneof(anyBytes, mutationsOf(validChoice.message)), asChoice), few);
    pair();
    fc.assert(fc.property(fc.oneof(anyBytes, mutationsOf(validGc)), asGc(spam, evaluateSpam)), few);
    fc.assert(fc.property(fc.oneof(anyBytes, mutationsOf(validArgmax.message)), asGc(argmax, evaluateArgmax)), few);
    fc.assert(fc.property(fc.oneof(anyBytes, mutationsOf(validLabels)), asLabels), few);
  });

  const he = await loadHe();
  test('lattice objects: any LWE ciphertext, p0 or KSK bytes load or are refused, never trap', () => {
    const params = makeParams({ N: 1000, B: 1, T: 24 });
    const sk = he.loadSecretKey(he.generateSecretKey());
    const seed = he.randomSeed();
    const nonce = he.randomSeed();
    const p0 = sk.publicKeyFor(seed, nonce);
    const id = { salt: he.randomSeed(), epoch: 1 };
    const user = sk.userKey(seed, id);
    const ksk = sk.keySwitchKey(seed, user, id, params.T);
    const decryptor = user.forContext(params);
    const lweLen = heLayout(params).lweBytes;
    const sized = (n: number) =>
      fc.oneof(
        fc.uint8Array({ maxLength: 64 }),
        fc.uint8Array({ minLength: n, maxLength: n }),
        fc.uint8Array({ minLength: n - 1, maxLength: n + 1 }),
      );
    try {
      fc.assert(
        fc.property(sized(lweLen), (lwe) => acceptsOrRejects(() => decryptor.decryptLwe(lwe), isCoreError)),
        { numRuns: Math.ceil(runs / 4) },
      );
      fc.assert(
        fc.property(sized(p0.length), (b) =>
          acceptsOrRejects(() => he.loadPublicKey(b, seed, nonce).dispose(), isCoreError),
        ),
        { numRuns: Math.ceil(runs / 20) },
      );
      fc.assert(
        fc.property(sized(ksk.length), (b) => acceptsOrRejects(() => he.loadKeySwitchKey(b).dispose(), isCoreError)),
        { numRuns: Math.ceil(runs / 40) },
      );
    } finally {
      user.dispose();
      sk.dispose();
    }
  });
}
