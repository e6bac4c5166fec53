// ProviderCrypto backed by the worker pool (workers/crypto-worker.ts).
// Session-scoped calls carry the session id as affinity key, so a session's
// OT state always lives in the same worker.
import type { UserKeyId } from '../../wasm/ts/he.js';
import type { ProviderCrypto, ServedModel } from './crypto.js';
import { WorkerPool } from './workers/pool.js';

export class WorkerCrypto implements ProviderCrypto {
  private readonly pool: WorkerPool;

  constructor(threads: number) {
    this.pool = new WorkerPool(new URL('./workers/crypto-worker.ts', import.meta.url), threads);
  }

  publicKey(model: ServedModel, clientNonce: Uint8Array): Promise<Uint8Array> {
    return this.pool.run('publicKey', [model.keyFile, model.providerSeed, clientNonce]);
  }

  keySwitchKey(model: ServedModel, user: UserKeyId): Promise<Uint8Array> {
    return this.pool.run('keySwitchKey', [model.keyFile, model.providerSeed, user]);
  }

  ot(sessionId: string, _model: ServedModel, payload: Uint8Array): Promise<Uint8Array> {
    return this.pool.run('ot', [sessionId, payload], { affinity: sessionId });
  }

  spam(
    sessionId: string,
    model: ServedModel,
    user: UserKeyId,
    lwe: Uint8Array,
    choices: Uint8Array,
  ): Promise<Uint8Array> {
    return this.pool.run('spam', [sessionId, model.keyFile, model.providerSeed, user, model.params, lwe, choices], {
      affinity: sessionId,
    });
  }

  topics(
    sessionId: string,
    model: ServedModel,
    user: UserKeyId,
    lwes: Uint8Array[],
    choices: Uint8Array,
  ): Promise<Uint8Array> {
    return this.pool.run('topics', [sessionId, model.keyFile, model.providerSeed, user, model.params, lwes, choices], {
      affinity: sessionId,
    });
  }

  topicLabels(sessionId: string, labels: Uint8Array): Promise<number> {
    return this.pool.run('topicLabels', [sessionId, labels], { affinity: sessionId });
  }

  async endSession(sessionId: string): Promise<void> {
    await this.pool.run('endSession', [sessionId], { affinity: sessionId });
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
