// Crypto worker: the provider's side of the private spam protocol, run off the
// event loop. Holds the loaded secret keys (read from their 0600 files here,
// never sent between threads), the user keys derived from them (decryption
// only ever uses a user key, docs/security.md) and each session's OT sender
// (sessions are pinned to one worker by the pool's affinity key).
import { loadHe, type HeParams, type ProviderKey, type UserKeyId } from '../../../wasm/ts/he.js';
import { ArgmaxDecoder, decodeArgmaxLabels, garbleArgmax, garbleSpam } from '../../../wasm/ts/gc.js';
import { extensionSize, OtSender } from '../../../wasm/ts/ot.js';
import { Tag, ProtocolError as WireError } from '../../../wasm/ts/ot-wire.js';
import { CoreError } from '../../../wasm/ts/status.js';
import type { ErrorCode } from '../../../protocol/errors.js';
import { USER_KEY_CACHE } from '../limits.js';
import { evaluateWithKeyFile } from '../blocklist.js';
import { readSecretFile } from '../secret-file.js';
import { serveTasks, type TaskTable } from './pool.js';
import { providerSodiumReady } from '../native-sodium.js';

await providerSodiumReady(); // before loadHe: the base OTs and the OPRF run on native libsodium
const he = await loadHe();
const keys = new Map<string, ProviderKey>();
/** Derived user keys, most recently used last. */
const userKeys = new Map<string, ProviderKey>();
const sessions = new Map<string, OtSender>();

/** What the pool gives each worker (worker-crypto.ts). */
export interface CryptoWorkerOptions {
  /** Bytes of unused OTs all sessions of this worker may hold together (16 per OT). */
  otPoolBytes: number;
}
let otPoolBytes = Infinity;

/** Bytes of unused OTs this worker's sessions hold. */
function pooledBytes(): number {
  let ots = 0;
  for (const s of sessions.values()) ots += s.available;
  return 16 * ots;
}

function coded(message: string, code: ErrorCode): Error {
  return Object.assign(new Error(message), { code });
}

/**
 * Maps a failure on the other party's bytes to an error frame code by its
 * type and code; anything else is ours and stays `internal`.
 */
function rejectInput(e: unknown, what: string): never {
  // A failed KOS check aborts the OT session for good (wasm/ts/ot.ts).
  if (e instanceof WireError) throw coded(e.message, e.fault === 'rejected' ? 'crypto_rejected' : 'bad_field');
  // Core and range messages name sizes and ranges only, never secret values.
  if (e instanceof CoreError) throw coded(e.message, 'bad_field');
  if (e instanceof RangeError) throw coded(`${what}: ${e.message}`, 'bad_field');
  throw e;
}

function key(keyFile: string): ProviderKey {
  let k = keys.get(keyFile);
  if (!k) {
    const bytes = readSecretFile(keyFile);
    try {
      k = he.loadSecretKey(bytes);
    } finally {
      bytes.fill(0);
    }
    keys.set(keyFile, k);
  }
  return k;
}

function userKey(keyFile: string, providerSeedHex: string, id: UserKeyId): ProviderKey {
  const name = `${keyFile}\0${Buffer.from(id.salt).toString('hex')}\0${id.epoch}`;
  let k = userKeys.get(name);
  if (k) {
    userKeys.delete(name);
  } else {
    k = key(keyFile).userKey(Buffer.from(providerSeedHex, 'hex'), id);
    if (userKeys.size >= USER_KEY_CACHE) {
      const [oldest, old] = userKeys.entries().next().value as [string, ProviderKey];
      userKeys.delete(oldest);
      old.dispose();
    }
  }
  userKeys.set(name, k);
  return k;
}

/** The session's OT sender, which must already hold OTs for a garbled circuit. */
function readySender(sessionId: string, request: string): OtSender {
  const s = sessions.get(sessionId);
  if (!s || s.available === 0)
    throw coded(`${request} before OT setup (send ot base and extension first)`, 'out_of_order');
  return s;
}

/** y = d + r mod 2^T, uniform to the provider (docs/crypto.md#decryption); it only feeds the garbler. */
function decrypt(keyFile: string, providerSeedHex: string, user: UserKeyId, params: HeParams, lwe: Uint8Array): number {
  try {
    return userKey(keyFile, providerSeedHex, user).forContext(params).decryptLwe(lwe);
  } catch (e) {
    rejectInput(e, 'lwe');
  }
}

/** ⌈log2 B⌉: the bits of a topic index (at least 1). */
const indexBits = (B: number): number => Math.max(1, Math.ceil(Math.log2(B)));

function sender(sessionId: string): OtSender {
  let s = sessions.get(sessionId);
  if (!s) {
    s = new OtSender(he.core, new TextEncoder().encode(sessionId)); // binds KOS to this session
    sessions.set(sessionId, s);
  }
  return s;
}

/** The operations WorkerCrypto runs here (worker-crypto.ts). */
const tasks = {
  publicKey(keyFile: string, providerSeedHex: string, clientNonce: Uint8Array): Uint8Array {
    return key(keyFile).publicKeyFor(Buffer.from(providerSeedHex, 'hex'), clientNonce);
  },

  keySwitchKey(keyFile: string, providerSeedHex: string, id: UserKeyId, T: number): Uint8Array {
    const seed = Buffer.from(providerSeedHex, 'hex');
    return key(keyFile).keySwitchKey(seed, userKey(keyFile, providerSeedHex, id), id, T);
  },

  ot(sessionId: string, payload: Uint8Array): Uint8Array {
    const s = sender(sessionId);
    try {
      if (payload[0] === Tag.OtBaseA) return s.respond(payload);
      if (payload[0] === Tag.OtExtend) {
        // Refused before anything is allocated; the session cannot go on (its client's pool ran ahead).
        if (pooledBytes() + 16 * extensionSize(payload) > otPoolBytes)
          throw coded('ot: the provider holds as many unused OTs as it can now; reconnect later', 'ot_pool_full');
        s.acceptExtension(payload);
        return new Uint8Array(0);
      }
    } catch (e) {
      rejectInput(e, 'ot');
    }
    throw coded(`ot: unknown OT message tag ${payload[0]}`, 'bad_field');
  },

  spam(
    sessionId: string,
    keyFile: string,
    providerSeedHex: string,
    user: UserKeyId,
    params: HeParams,
    lwe: Uint8Array,
    choice: Uint8Array,
  ): Uint8Array {
    const s = readySender(sessionId, 'spam_request');
    const y = decrypt(keyFile, providerSeedHex, user, params, lwe);
    try {
      return garbleSpam({ y, T: params.T }, s, choice);
    } catch (e) {
      rejectInput(e, 'spam_request.choices');
    }
  },

  topics(
    sessionId: string,
    keyFile: string,
    providerSeedHex: string,
    user: UserKeyId,
    params: HeParams,
    bPrime: number,
    ciphertexts: Uint8Array,
    choice: Uint8Array,
  ): { gc: Uint8Array; decoder: Uint8Array } {
    const s = readySender(sessionId, 'topic_request');
    let ys: number[];
    try {
      const decrypted = userKey(keyFile, providerSeedHex, user).forContext(params).decryptTopics(ciphertexts, bPrime);
      ys = Array.from(decrypted);
      decrypted.fill(0);
    } catch (e) {
      rejectInput(e, 'topic_request.lwes');
    }
    try {
      const { message, decoder } = garbleArgmax({ ys, T: params.T, indexBits: indexBits(params.B) }, s, choice);
      return { gc: message, decoder: decoder.toBytes() };
    } catch (e) {
      rejectInput(e, 'topic_request.choices');
    } finally {
      ys.fill(0);
    }
  },

  topicLabels(decoder: Uint8Array, labels: Uint8Array): number {
    try {
      return decodeArgmaxLabels(ArgmaxDecoder.fromBytes(he.core, decoder), labels);
    } catch (e) {
      rejectInput(e, 'topic_labels.labels');
    } finally {
      decoder.fill(0);
    }
  },

  blocklist(keyFile: string, blinded: Uint8Array): Uint8Array {
    return evaluateWithKeyFile(keyFile, blinded);
  },

  endSession(sessionId: string): void {
    sessions.get(sessionId)?.close();
    sessions.delete(sessionId);
  },
} satisfies TaskTable;

/** The task table as the pool sees it (a type only: importing it loads nothing). */
export type CryptoTasks = typeof tasks;

otPoolBytes = (serveTasks(tasks) as Partial<CryptoWorkerOptions> | undefined)?.otPoolBytes ?? Infinity;
