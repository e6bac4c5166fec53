// ProviderCrypto backed by the worker pool (workers/crypto-worker.ts).
// Session-scoped calls carry the session id as affinity key, so a session's
// OT state always lives in the same worker.
import type { UserKeyId } from '../../wasm/ts/he.js';
import { Tag } from '../../wasm/ts/ot-wire.js';
import type { ProviderCrypto, ServedModel } from './crypto.js';
import type { CryptoTasks } from './workers/crypto-worker.js';
import { WorkerPool, type Placement, type PoolHealth } from './workers/pool.js';

const SETUP: Placement = { priority: 'setup' };

export class WorkerCrypto implements ProviderCrypto {
  private readonly pool: WorkerPool<CryptoTasks>;

  constructor(threads: number) {
    // Beside this file: crypto-worker.ts under tsx, crypto-worker.js once compiled (npm run build:server).
    const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
    this.pool = new WorkerPool(new URL(`./workers/crypto-worker.${ext}`, import.meta.url), threads);
  }

  // Session setup (public key, key-switching key, base OTs) yields to per-email work.
  publicKey(model: ServedModel, clientNonce: Uint8Array): Promise<Uint8Array> {
    return this.pool.schedule(SETUP, 'publicKey', model.keyFile, model.providerSeed, clientNonce);
  }

  keySwitchKey(model: ServedModel, user: UserKeyId): Promise<Uint8Array> {
    return this.pool.schedule(SETUP, 'keySwitchKey', model.keyFile, model.providerSeed, user, model.params.T);
  }

  ot(sessionId: string, _model: ServedModel, payload: Uint8Array): Promise<Uint8Array> {
    const priority = payload[0] === Tag.OtBaseA ? 'setup' : 'email'; // base OTs: once per session
    return this.pool.schedule({ affinity: sessionId, priority }, 'ot', sessionId, payload);
  }

  health(): PoolHealth {
    return this.pool.health();
  }

  spam(
    sessionId: string,
    model: ServedModel,
    user: UserKeyId,
    lwe: Uint8Array,
    choices: Uint8Array,
  ): Promise<Uint8Array> {
    return this.pool.runOn(
      sessionId,
      'spam',
      sessionId,
      model.keyFile,
      model.providerSeed,
      user,
      model.params,
      lwe,
      choices,
    );
  }

  topics(
    sessionId: string,
    model: ServedModel,
    user: UserKeyId,
    bPrime: number,
    ciphertexts: Uint8Array,
    choices: Uint8Array,
  ): Promise<{ gc: Uint8Array; decoder: Uint8Array }> {
    return this.pool.runOn(
      sessionId,
      'topics',
      sessionId,
      model.keyFile,
      model.providerSeed,
      user,
      model.params,
      bPrime,
      ciphertexts,
      choices,
    );
  }

  topicLabels(sessionId: string, decoder: Uint8Array, labels: Uint8Array): Promise<number> {
    return this.pool.runOn(sessionId, 'topicLabels', decoder, labels);
  }

  blocklist(keyFile: string, blinded: Uint8Array): Promise<Uint8Array> {
    return this.pool.schedule({}, 'blocklist', keyFile, blinded);
  }

  async endSession(sessionId: string): Promise<void> {
    await this.pool.runOn(sessionId, 'endSession', sessionId);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
