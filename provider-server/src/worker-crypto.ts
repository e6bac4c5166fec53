// ProviderCrypto backed by the worker pool (workers/crypto-worker.ts).
// Session-scoped calls carry the session id as affinity key, so a session's
// OT state always lives in the same worker. When that worker dies, the pool
// replaces it and the state is gone: the session's next call (and any call
// that was running) fails with `session_lost`, which tells the client to
// reconnect and send its request again (docs/protocol.md#errors).
import { ProtocolError } from '../../protocol/errors.js';
import type { UserKeyId } from '../../wasm/ts/he.js';
import { Tag } from '../../wasm/ts/ot-wire.js';
import type { ProviderCrypto, ServedModel } from './crypto.js';
import type { CryptoTasks, CryptoWorkerOptions } from './workers/crypto-worker.js';
import { WorkerPool, type Placement, type PoolHealth, type WorkerMemory } from './workers/pool.js';

const SETUP: Placement = { priority: 'setup' };

const lost = (): ProtocolError =>
  new ProtocolError(
    'session_lost',
    "the provider lost this session's OT state (a crypto worker restarted): reconnect and send the request again",
  );

export class WorkerCrypto implements ProviderCrypto {
  private readonly pool: WorkerPool<CryptoTasks>;
  /** The generation of its worker (WorkerPool.generation) in which each session's OT state was made. */
  private readonly otState = new Map<string, number>();

  /** `otPoolBytes`: the unused OTs all sessions may hold, shared out equally among the workers. */
  constructor(
    threads: number,
    {
      otPoolBytes = Infinity,
      workerExited,
    }: {
      otPoolBytes?: number;
      /** A worker died and was replaced (WorkerPool): its exit code and error, for the log. */
      workerExited?: (code: number, error: Error | undefined) => void;
    } = {},
  ) {
    // Beside this file: crypto-worker.ts under tsx, crypto-worker.js once compiled (npm run build:server).
    const ext = import.meta.url.endsWith('.ts') ? 'ts' : 'js';
    const options: CryptoWorkerOptions = { otPoolBytes: otPoolBytes / threads };
    const entry = new URL(`./workers/crypto-worker.${ext}`, import.meta.url);
    this.pool = new WorkerPool(entry, threads, options, workerExited);
  }

  // Session setup (public key, key-switching key, base OTs) yields to per-email work.
  publicKey(model: ServedModel, clientNonce: Uint8Array): Promise<Uint8Array> {
    return this.pool.schedule(SETUP, 'publicKey', model.keyFile, model.providerSeed, clientNonce);
  }

  keySwitchKey(model: ServedModel, user: UserKeyId): Promise<Uint8Array> {
    return this.pool.schedule(SETUP, 'keySwitchKey', model.keyFile, model.providerSeed, user, model.params.T);
  }

  ot(sessionId: string, _model: ServedModel, payload: Uint8Array): Promise<Uint8Array> {
    if (!this.otState.has(sessionId)) this.otState.set(sessionId, this.pool.generation(sessionId));
    const priority = payload[0] === Tag.OtBaseA ? 'setup' : 'email'; // base OTs: once per session
    return this.withOtState(sessionId, () =>
      this.pool.schedule({ affinity: sessionId, priority }, 'ot', sessionId, payload),
    );
  }

  /**
   * Runs a task that uses the session's OT state: refused with session_lost
   * when the worker holding that state was replaced since it was made, and a
   * failure is session_lost when the worker was replaced meanwhile.
   */
  private async withOtState<T>(sessionId: string, run: () => Promise<T>): Promise<T> {
    const made = this.otState.get(sessionId);
    const gone = () => made !== undefined && made !== this.pool.generation(sessionId);
    if (gone()) throw lost();
    try {
      return await run();
    } catch (e) {
      throw gone() ? lost() : e;
    }
  }

  health(): PoolHealth {
    return this.pool.health();
  }

  ping(): Promise<void> {
    return this.pool.ping();
  }

  memory(): Promise<WorkerMemory[]> {
    return this.pool.memory();
  }

  // The per-email circuits: the client's inputs, with the model's key file, seed and parameters.
  spam(...[sessionId, model, user, ...inputs]: Parameters<ProviderCrypto['spam']>): ReturnType<ProviderCrypto['spam']> {
    return this.withOtState(sessionId, () =>
      this.pool.runOn(sessionId, 'spam', sessionId, model.keyFile, model.providerSeed, user, model.params, ...inputs),
    );
  }

  topics(
    ...[sessionId, model, user, ...inputs]: Parameters<ProviderCrypto['topics']>
  ): ReturnType<ProviderCrypto['topics']> {
    return this.withOtState(sessionId, () =>
      this.pool.runOn(sessionId, 'topics', sessionId, model.keyFile, model.providerSeed, user, model.params, ...inputs),
    );
  }

  topicLabels(sessionId: string, decoder: Uint8Array, labels: Uint8Array): Promise<number> {
    return this.withOtState(sessionId, () => this.pool.runOn(sessionId, 'topicLabels', decoder, labels));
  }

  blocklist(keyFile: string, blinded: Uint8Array): Promise<Uint8Array> {
    return this.pool.schedule({}, 'blocklist', keyFile, blinded);
  }

  async endSession(sessionId: string): Promise<void> {
    this.otState.delete(sessionId);
    await this.pool.runOn(sessionId, 'endSession', sessionId);
  }

  close(): Promise<void> {
    return this.pool.close();
  }
}
